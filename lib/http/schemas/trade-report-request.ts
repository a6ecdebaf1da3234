import * as z from 'zod/mini';
import { AMOUNT_PATTERN } from '../../domain/money.js';
import { ANONYMOUS_PARTICIPANT, TRADE_REPORT_LIMITS as L } from '../../domain/trade-report.js';
import { described } from './common.js';

// The body of POST /trades as the API description shows it. The handler passes the body to the domain's
// trade-report rules (`validateTradeReport`), which check every field and every rule spanning fields at once;
// this schema says the same fields, types and limits (the limits are the rules' own constants) for readers and
// client generators. The contract tests check that every trade the service accepted matches it.

const optional = <T extends z.ZodMiniType>(schema: T) => z.optional(z.nullable(schema));
const text = (max: number, description: string) => described(z.string().check(z.maxLength(max)), description);
const decimal = (max: number, description: string) =>
  described(z.string().check(z.regex(AMOUNT_PATTERN), z.maxLength(max)), description);
const timestampMs = (description: string) =>
  described(
    z.int().check(z.minimum(L.timestampMinMs), z.maximum(L.timestampMaxMs)),
    `${description} (UNIX milliseconds)`,
  );

const party = z.object({
  side: z.enum(['buy', 'sell']),
  participant_code: described(
    z.string().check(z.maxLength(L.textMaxLength)),
    `A 6-character participant code, or \`${ANONYMOUS_PARTICIPANT}\` when \`parties_anonymous\` is true.`,
  ),
  asset: text(
    L.symbolMaxLength,
    'What this party receives: the base of `symbol` for the buyer, the quote for the seller.',
  ),
  amount: optional(
    decimal(
      L.amountMaxLength,
      "Method B: what this party receives, at the asset's precision. Omit with `trade_quantity` (method A).",
    ),
  ),
  settling: optional(
    described(
      z.union([z.boolean(), z.enum(['true', 'false'])]),
      'Default true (false for an anonymous party, which cannot settle).',
    ),
  ),
  account_label: optional(text(L.accountLabelMaxLength, '`general` when absent.')),
  liquidity_indicator: optional(z.enum(['added', 'removed'])),
  client_order_id: optional(z.string().check(z.maxLength(L.clientOrderIdMaxLength))),
  order_id: optional(z.string().check(z.maxLength(L.orderIdMaxLength))),
  execution_id: optional(z.string().check(z.maxLength(L.executionIdMaxLength))),
});

export const tradeReportRequest = z
  .object({
    client_trade_id: text(L.clientTradeIdMaxLength, 'Your id for the trade: unique per platform for 72 hours.'),
    session_id: optional(text(L.textMaxLength, '`""` (the default) for a trade outside a trading session.')),
    trade_reporter: text(L.textMaxLength, 'Who reports the trade.'),
    reporting_party: optional(described(z.string().check(z.regex(/^[A-Z0-9]{6}$/)), 'A participant code.')),
    settlement_schedule: optional(z.string().check(z.maxLength(L.textMaxLength))),
    platform_code: text(L.textMaxLength, "Your platform's code."),
    market_identifier_code: optional(z.string().check(z.maxLength(L.textMaxLength))),
    symbol: text(L.symbolMaxLength, '`BASE/QUOTE` of known assets.'),
    product_type: z.enum(['spot', 'forward']),
    trade_type: z.enum(['regular', 'block']),
    trade_price: decimal(L.priceMaxLength, 'Greater than zero; any precision, echoed as sent.'),
    trade_quantity: optional(
      decimal(
        L.amountMaxLength,
        'Method A: the quantity of the base (the service computes both amounts). Omit to give each party its `amount` (method B).',
      ),
    ),
    physical_delivery: described(z.literal(true), 'Only physical delivery is supported.'),
    transaction_timestamp: timestampMs('When the trade was executed; not in the future'),
    comment: optional(z.string().check(z.maxLength(L.commentMaxLength))),
    parties_anonymous: z.boolean(),
    settlement_price_index_id: optional(text(L.settlementPriceIndexIdMaxLength, 'Required for forwards.')),
    settlement_timestamp: optional(timestampMs('When settlement may start; not after expiry')),
    expiry_timestamp: optional(timestampMs('Forwards: when an unsettled trade defaults; in the future')),
    bank_fee: optional(decimal(L.amountMaxLength, `At most ${L.bankFeeDecimals} decimals.`)),
    parties: described(
      z.array(party).check(z.length(L.parties)),
      'Exactly one buy and one sell party; at least one settling.',
    ),
  })
  .check(
    z.meta({ id: 'TradeReport', description: 'A trade to settle. Every problem is reported at once in one 400.' }),
  );
