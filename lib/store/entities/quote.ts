import * as z from 'zod/mini';
import { flag, integer, text } from '../entity/attributes.js';
import { defineEntity } from '../entity/entity.js';

/**
 * A stored quote. `product` tells which execute route may take it (a convert-withdraw quote is not a
 * liquidity quote, though both live here). Amounts are fixed-point text with exactly their asset's decimals,
 * the price its exact decimal text; none of them is ever summed in DynamoDB.
 */

/** Convert-withdraw quotes only: where the bought asset goes and the network fee on top of `total`. */
const withdrawalSchema = z.object({
  address: text,
  /** Fee in the underlying, fixed-point with its decimals; what the fee account receives. */
  network_fee_quantity: text,
  /** The fee priced in the quoted currency, fixed-point with its decimals. */
  network_fee_notional: text,
  /** `total` + `network_fee_notional`: what the participant pays in all. */
  total_notional: text,
});

const quoteStatus = z.enum(['open', 'executed']);

const quoteSchema = z.object({
  quote_id: text,
  /** `liquidity`, or another product's name (convert-withdraw, rewards, award funding). */
  product: text,
  /** The RFQ's request id, echoed in the quote and in the execution result. */
  request_id: text,
  platform_code: text,
  /** Whose accounts trade: the platform's own participant or one of its customers. */
  participant_code: text,
  account_group: text,
  account_label: text,
  /** True when the participant is one of the platform's customers rather than the platform itself. */
  on_behalf_of: flag,
  side: z.enum(['buy', 'sell']),
  underlying: text,
  quoted_currency: text,
  quantity: text,
  total: text,
  price: text,
  /** The reference price and spread the price was made from, kept for audit. */
  reference_price: text,
  spread_bps: text,
  /** The client gave `quantity` or `total`; the other was computed and rounded. */
  quoted_by: z.enum(['quantity', 'total']),
  created_at: integer,
  expire_ts: integer,
  status: quoteStatus,
  executed_at: z._default(z.nullable(integer), null),
  trade_id: z._default(z.nullable(text), null),
  withdrawal: z.optional(withdrawalSchema),
});

export type StoredQuote = z.output<typeof quoteSchema>;
export type QuoteWithdrawal = z.output<typeof withdrawalSchema>;
export type QuoteStatus = z.output<typeof quoteStatus>;

/** A quote from an RFQ (or made and executed at once by rewards and award funding); read by id, executed once. */
export const quoteEntity = defineEntity({
  type: 'quote',
  table: 'main',
  schema: quoteSchema,
  key: { pk: 'QUOTE#{quote_id}', sk: 'QUOTE' },
});
