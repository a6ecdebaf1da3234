import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { postTrades } from '../../lib/routes.js';
import { reportTrade } from '../../lib/trades/report-trade.js';

/**
 * POST /trades: report an executed trade for settlement. The body is checked inside the use case by the
 * domain's trade-report schema (`validateTradeReport`), not here: its rules spanning fields need the caller's
 * platform and the request time. All issues come back in one 400.
 */
export const bind = routeHandler(
  postTrades,
  {
    body: z.unknown(),
    documentedBody: async () => (await import('../../lib/http/schemas/trade-report-request.js')).tradeReportRequest,
    response: async () => (await import('../../lib/http/schemas/trades.js')).tradeResponse,
    summary: 'Report a trade for settlement',
  },
  async ({ ctx, body, auth, claim }) => ({ message: await reportTrade(ctx, body, auth, claim) }),
);

export const handler = onLambda(bind);
