import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { postParticipantsCustomersMinor } from '../../lib/routes.js';
import { createMinor } from '../../lib/participants/create-minor.js';

/**
 * POST /participants/customers/minor. The body is checked inside the use case by the domain's minor schema
 * (`minorRequestSchema`, which needs the request time for the age rules); every problem comes back at once.
 */
export const bind = routeHandler(
  postParticipantsCustomersMinor,
  {
    body: z.unknown(),
    documentedBody: async () => (await import('../../lib/http/schemas/minor-request.js')).minorRequest,
    successStatus: 201,
    response: async () => (await import('../../lib/http/schemas/participants.js')).createdCustomerResponse,
    summary: 'Create a minor customer',
  },
  async ({ ctx, body, auth, claim }) => ({
    message: await createMinor(ctx, auth.platformCode, body, claim),
  }),
);

export const handler = onLambda(bind);
