import * as z from 'zod/mini';
import { apiHandler } from '../../lib/http/api-handler.js';
import { createMinor } from '../../lib/participants/create-minor.js';
import { createdCustomerResponse } from '../../lib/http/schemas/participants.js';
import { minorRequest } from '../../lib/http/schemas/customer-requests.js';

/** POST /participants/customers/minor. The body passes through untyped: the minor rules report every problem at once. */
export const handler = apiHandler({ body: z.unknown(), documentedBody: minorRequest, successStatus: 201, response: createdCustomerResponse, summary: 'Create a minor customer' }, async ({ body, auth, claim }) => ({
  message: await createMinor(auth.platformCode, body, claim),
}));
