import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { getAccountsAccountIdMovements } from '../../lib/routes.js';
import { pageQuery } from '../../lib/http/zod.js';
import { listAccountMovements } from '../../lib/movements/list-movements.js';
import { movementQueryFields } from '../../lib/http/schemas/movement-query.js';

/** GET /accounts/{account_id}/movements: one account's movements, newest first, each with its change. */
export const bind = routeHandler(
  getAccountsAccountIdMovements,
  {
    path: z.object({ account_id: z.string().check(z.maxLength(100, 'must be an account id (a UUID)')) }),
    query: z.object({ ...movementQueryFields, ...pageQuery(100) }),
    response: async () => (await import('../../lib/http/schemas/movements.js')).accountMovementListResponse,
    summary: "List an account's movements",
  },
  async ({ ctx, path, query, auth }) => listAccountMovements(ctx, auth.platformCode, path.account_id, query),
);

export const handler = onLambda(bind);
