import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { getWithdrawalsRequestsId } from '../../lib/routes.js';
import { getWithdrawalOfPlatform } from '../../lib/withdrawals/get-withdrawal.js';

/** GET /withdrawals/requests/{id}: one of the platform's withdrawal requests (from convert-withdraw executions). */
export const bind = routeHandler(
  getWithdrawalsRequestsId,
  {
    path: z.object({ id: z.string().check(z.maxLength(100, 'must be a withdrawal request id (a UUID)')) }),
    response: async () => (await import('../../lib/http/schemas/withdrawals.js')).withdrawalRequestResponse,
    summary: 'Get a withdrawal request',
  },
  async ({ ctx, path, auth }) => getWithdrawalOfPlatform(ctx, auth.platformCode, path.id),
);

export const handler = onLambda(bind);
