import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { getTrades } from '../../lib/routes.js';
import { accountLabelField, pageQuery, queryFilter } from '../../lib/http/zod.js';
import { listTrades } from '../../lib/trades/list-trades.js';

/**
 * A transaction-time bound: UNIX milliseconds, or nanoseconds (more than 16 digits) as the reference API
 * also accepts; nanoseconds are cut to the millisecond without passing through a float.
 */
const timestamp = () =>
  z.pipe(
    z.string().check(z.regex(/^\d{1,19}$/, 'must be a UNIX timestamp in milliseconds')),
    z.transform((text) => (text.length > 16 ? Number(BigInt(text) / 1_000_000n) : Number(text))),
  );

const query = z.object({
  client_trade_id: queryFilter(),
  trade_state: z.optional(z.enum(['accepted', 'active', 'terminated'])),
  settlement_state: z.optional(
    z.enum([
      'null',
      'obligations_outstanding',
      'current_obligations_met',
      'counterparty_defaulted',
      'settled',
      'defaulted',
    ]),
  ),
  party_code: queryFilter(),
  reporting_party: queryFilter(),
  account_label: accountLabelField(),
  market_identifier_code: queryFilter(),
  // The reference API's operators, with the brackets literally in the parameter name...
  'transaction_timestamp[gt]': z.optional(timestamp()),
  'transaction_timestamp[gte]': z.optional(timestamp()),
  'transaction_timestamp[e]': z.optional(timestamp()),
  'transaction_timestamp[lt]': z.optional(timestamp()),
  'transaction_timestamp[lte]': z.optional(timestamp()),
  // ...and plain inclusive bounds for clients that find brackets awkward.
  transaction_timestamp_from: z.optional(timestamp()),
  transaction_timestamp_to: z.optional(timestamp()),
  ...pageQuery(100),
});

/**
 * GET /trades: the trades the platform reported or is a party to, newest transaction first. Time bounds all
 * apply together: `transaction_timestamp[gt|gte|e|lt|lte]` as in the reference API, or the inclusive
 * `transaction_timestamp_from` / `transaction_timestamp_to`.
 */
export const bind = routeHandler(
  getTrades,
  {
    query,
    response: async () => (await import('../../lib/http/schemas/trades.js')).tradeListResponse,
    summary: 'List trades',
  },
  async ({ ctx, query, auth }) => listTrades(ctx, auth.platformCode, query),
);

export const handler = onLambda(bind);
