import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { apiHandler } from '../../lib/http/api-handler.js';
import { createMinor } from '../../lib/participants/create-minor.js';

/** POST /participants/customers/minor. The body passes through untyped: the minor rules report every problem at once. */
export const bind = apiHandler(
  {
    body: z.unknown(),
    documentedBody: async () => (await import('../../lib/http/schemas/customer-requests.js')).minorRequest,
    successStatus: 201,
    response: async () => (await import('../../lib/http/schemas/participants.js')).createdCustomerResponse,
    summary: 'Create a minor customer',
  },
  async ({ ctx, body, auth, claim }) => ({
    message: await createMinor(ctx, auth.platformCode, body, claim),
  }),
);

export const handler = onLambda(bind);
