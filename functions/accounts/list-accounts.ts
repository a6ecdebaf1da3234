import * as z from 'zod/mini';
import { listAccounts } from '../../lib/accounts/list-accounts.js';
import { apiHandler } from '../../lib/http/api-handler.js';
import { pageQuery } from '../../lib/http/zod.js';

const query = z.object({
  account_owner: z.optional(z.string()),
  account_group: z.optional(z.string()),
  account_label: z.optional(z.string()),
  asset: z.optional(z.string()),
  ...pageQuery(100),
});

/** GET /accounts: balances of the platform's accounts and its customers' accounts. */
export const handler = apiHandler({ query }, async ({ query, auth }) => listAccounts(auth.platformCode, query));
