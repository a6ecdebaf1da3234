import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { postParticipantsCustomersNew } from '../../lib/routes.js';
import { createCustomer } from '../../lib/participants/create-customer.js';

/**
 * POST /participants/customers/new. The body is checked inside the use case by the domain's customer schema
 * (`customerRequestSchema`), not here: its rules on ages and the reference's time windows need the request
 * time. Every problem comes back at once, cross-field ones (US state and zip, ID type and its description)
 * included.
 */
export const bind = routeHandler(
  postParticipantsCustomersNew,
  {
    body: z.unknown(),
    documentedBody: async () => (await import('../../lib/http/schemas/customer-request.js')).customerRequest,
    successStatus: 201,
    response: async () => (await import('../../lib/http/schemas/participants.js')).createdCustomerResponse,
    summary: 'Create a customer',
  },
  async ({ ctx, body, auth, claim }) => ({
    message: await createCustomer(ctx, auth.platformCode, body, claim),
  }),
);

export const handler = onLambda(bind);
