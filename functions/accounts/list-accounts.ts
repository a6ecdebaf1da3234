import * as z from 'zod/mini';
import { listAccounts } from '../../lib/accounts/list-accounts.js';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { getAccounts } from '../../lib/routes.js';
import { accountLabelField, pageQuery, queryFilter } from '../../lib/http/zod.js';

const query = z.object({
  account_owner: queryFilter(),
  account_group: queryFilter(),
  account_label: accountLabelField(),
  asset: queryFilter(),
  ...pageQuery(100),
});

/** GET /accounts: balances of the platform's accounts and its customers' accounts. */
export const bind = routeHandler(
  getAccounts,
  {
    query,
    response: async () => (await import('../../lib/http/schemas/accounts.js')).accountListResponse,
    summary: 'List accounts',
  },
  async ({ ctx, query, auth }) => listAccounts(ctx, auth.platformCode, query),
);

export const handler = onLambda(bind);
