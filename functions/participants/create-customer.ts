import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { apiHandler } from '../../lib/http/api-handler.js';
import { createCustomer } from '../../lib/participants/create-customer.js';

/**
 * POST /participants/customers/new. The body passes through untyped: the customer rules report every
 * problem at once, including cross-field ones (US state and zip, ID type and its description), which a
 * schema would split into two rounds.
 */
export const bind = apiHandler(
  {
    body: z.unknown(),
    documentedBody: async () => (await import('../../lib/http/schemas/customer-requests.js')).customerRequest,
    successStatus: 201,
    response: async () => (await import('../../lib/http/schemas/participants.js')).createdCustomerResponse,
    summary: 'Create a customer',
  },
  async ({ ctx, body, auth, claim }) => ({
    message: await createCustomer(ctx, auth.platformCode, body, claim),
  }),
);

export const handler = onLambda(bind);
