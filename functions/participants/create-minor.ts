import * as z from 'zod/mini';
import { onLambda } from '../../lib/context.js';
import { apiHandler } from '../../lib/http/api-handler.js';
import { createMinor } from '../../lib/participants/create-minor.js';
import { createdCustomerResponse } from '../../lib/http/schemas/participants.js';
import { minorRequest } from '../../lib/http/schemas/customer-requests.js';

/** POST /participants/customers/minor. The body passes through untyped: the minor rules report every problem at once. */
export const bind = apiHandler({ body: z.unknown(), documentedBody: minorRequest, successStatus: 201, response: createdCustomerResponse, summary: 'Create a minor customer' }, async ({ ctx, body, auth, claim }) => ({
  message: await createMinor(ctx, auth.platformCode, body, claim),
}));

export const handler = onLambda(bind);
