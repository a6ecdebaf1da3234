import * as z from 'zod/mini';
import { getAccountOfPlatform } from '../../lib/accounts/get-account.js';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { getAccountsAccountId } from '../../lib/routes.js';

/** GET /accounts/{account_id}: one of the platform's or its customers' accounts, by its stable id. */
export const bind = routeHandler(
  getAccountsAccountId,
  {
    path: z.object({ account_id: z.string().check(z.maxLength(100, 'must be an account id (a UUID)')) }),
    response: async () => (await import('../../lib/http/schemas/accounts.js')).accountResponse,
    summary: 'Get an account',
  },
  async ({ ctx, path, auth }) => getAccountOfPlatform(ctx, auth.platformCode, path.account_id),
);

export const handler = onLambda(bind);
