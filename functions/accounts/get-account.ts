import * as z from 'zod/mini';
import { getAccountOfPlatform } from '../../lib/accounts/get-account.js';
import { apiHandler } from '../../lib/http/api-handler.js';
import { accountResponse } from '../../lib/http/schemas/accounts.js';

/** GET /accounts/{account_id}: one of the platform's or its customers' accounts, by its stable id. */
export const handler = apiHandler({ path: z.object({ account_id: z.string().check(z.maxLength(100, 'must be an account id (a UUID)')) }), response: accountResponse, summary: 'Get an account' }, async ({ path, auth }) =>
  getAccountOfPlatform(auth.platformCode, path.account_id),
);
