import * as z from 'zod/mini';
import { apiHandler } from '../../lib/http/api-handler.js';
import { reportTrade } from '../../lib/trades/report-trade.js';
import { tradeResponse } from '../../lib/http/schemas/trades.js';
import { tradeReportRequest } from '../../lib/http/schemas/trade-report-request.js';

/**
 * POST /trades: report an executed trade for settlement. The body is checked by the domain's trade-report
 * rules rather than a zod schema: nearly every rule spans fields, and all issues come back in one 400.
 */
export const handler = apiHandler({ body: z.unknown(), documentedBody: tradeReportRequest, response: tradeResponse, summary: 'Report a trade for settlement' }, async ({ body, auth, claim }) => ({ message: await reportTrade(body, auth, claim) }));
