import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { getTradesTradeId } from '../../lib/routes.js';
import { findTrade } from '../../lib/trades/list-trades.js';

/** GET /trades/{trade_id}: one trade the platform sees, with its live trade and settlement states. */
export const bind = routeHandler(
  getTradesTradeId,
  {
    path: z.object({ trade_id: z.string().check(z.minLength(1), z.maxLength(100)) }),
    response: async () => (await import('../../lib/http/schemas/trades.js')).tradeResponse,
    summary: 'Get a trade',
  },
  async ({ ctx, path, auth }) => findTrade(ctx, auth.platformCode, path.trade_id),
);

export const handler = onLambda(bind);
