import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { getWithdrawalsRequests } from '../../lib/routes.js';
import { pageQuery, queryFilter } from '../../lib/http/zod.js';
import { listWithdrawals } from '../../lib/withdrawals/list-withdrawals.js';

const query = z.object({
  participant_code: queryFilter(50),
  asset: queryFilter(25),
  status: z.optional(z.enum(['PENDING', 'CONFIRMED', 'FAILED'])),
  ...pageQuery(100),
});

/** GET /withdrawals/requests: the platform's withdrawal requests (convert-withdraw executions), newest first. */
export const bind = routeHandler(
  getWithdrawalsRequests,
  {
    query,
    response: async () => (await import('../../lib/http/schemas/withdrawals.js')).withdrawalRequestListResponse,
    summary: 'List withdrawal requests',
  },
  async ({ ctx, query, auth }) => listWithdrawals(ctx, auth.platformCode, query),
);

export const handler = onLambda(bind);
