import * as z from 'zod/mini';
import { apiHandler } from '../../lib/http/api-handler.js';
import { findTrade } from '../../lib/trades/list-trades.js';
import { tradeResponse } from '../../lib/http/schemas/trades.js';

/** GET /trades/{trade_id}: one trade the platform sees, with its live trade and settlement states. */
export const handler = apiHandler({ path: z.object({ trade_id: z.string().check(z.minLength(1), z.maxLength(100)) }), response: tradeResponse, summary: 'Get a trade' }, async ({ path, auth }) =>
  findTrade(auth.platformCode, path.trade_id),
);
