import * as z from 'zod/mini';
import { amount, described, epochMs, messageOf, pageOf } from './common.js';

const settlementState = z.nullable(
  z.enum(['obligations_outstanding', 'current_obligations_met', 'counterparty_defaulted', 'settled', 'defaulted']),
);
const nullableMs = (description: string) => z.nullable(epochMs(description));

const tradePartySchema = z
  .object({
    side: z.enum(['buy', 'sell']),
    participant_code: described(z.string(), 'The party, or `Anonymous`.'),
    asset: described(z.string(), 'What this party receives: the base for the buyer, the quote for the seller.'),
    amount: amount("What this party receives, at the asset's precision."),
    settling: z.boolean(),
    account_label: z.string(),
    liquidity_indicator: z.nullable(z.enum(['added', 'removed'])),
    client_order_id: z.nullable(z.string()),
    order_id: z.nullable(z.string()),
    execution_id: z.nullable(z.string()),
    settlement_state: settlementState,
    obligations_outstanding_timestamp: nullableMs('When the party was last found short'),
    current_obligations_met_timestamp: nullableMs('When the party was found to hold what it delivers'),
    collateral_percentage: described(z.null(), "The reference API's collateral field: not offered here."),
    account_profile: z.null(),
    trader: z.null(),
    zrn: z.null(),
    manual_order_indicator: z.null(),
  })
  .check(z.meta({ id: 'TradeParty' }));

export const tradeSchema = z
  .object({
    trade_id: z.string(),
    batch_trade_id: z.null(),
    client_trade_id: described(z.string(), "The reporter's id (a quote's `quote_id` for executions)."),
    session_id: described(z.nullable(z.string()), 'null for a trade outside a trading session.'),
    trade_reporter: z.string(),
    trade_reporter_code: z.null(),
    reporting_party: z.nullable(z.string()),
    settlement_schedule: z.nullable(z.string()),
    platform_code: z.string(),
    market_identifier_code: z.nullable(z.string()),
    symbol: described(z.string(), '`BASE/QUOTE`.'),
    product_type: z.enum(['spot', 'forward']),
    trade_type: z.enum(['regular', 'block']),
    trade_price: described(z.string(), 'As submitted.'),
    trade_quantity: amount("The buyer's amount."),
    physical_delivery: z.literal(true),
    transaction_timestamp: epochMs('When the trade was executed'),
    comment: z.nullable(z.string()),
    parties_anonymous: z.boolean(),
    settlement_price_index_id: z.nullable(z.string()),
    settlement_timestamp: nullableMs('When settlement may start'),
    expiry_timestamp: nullableMs('Forwards: when an unsettled trade defaults'),
    bank_fee: z.nullable(amount('Bank fee, 2 decimals.')),
    contract_size: z.literal(1),
    underlying: z.string(),
    quoted_currency: z.string(),
    trade_state: z.enum(['accepted', 'active', 'terminated']),
    settlement_state: settlementState,
    accepted_timestamp: epochMs('Accepted'),
    current_obligations_met_timestamp: nullableMs('Every settling party held what it delivers'),
    obligations_outstanding_timestamp: nullableMs('A settling party was found short'),
    settled_timestamp: nullableMs('Settled'),
    defaulted_timestamp: nullableMs('Defaulted'),
    last_update: epochMs('Last change'),
    total_notional: amount('What the quote-currency side receives: price x quantity at its precision.'),
    asset_cost_notional: amount('The same: no fee is charged on top of a trade.'),
    spread_notional: z.nullable(
      amount(
        "A quote execution's: the quote's spread_notional (|price - reference price| x quantity, quoted currency).",
      ),
    ),
    spread_bps: described(z.nullable(z.string()), "A quote execution's: the quote's spread_bps; null otherwise."),
    // The reference API's fields for products this service does not have: present, with no value.
    issuer_fee_rate: z.null(),
    issuer_fee_amount: z.null(),
    issuer_fee_payor_type: z.null(),
    origin: described(z.literal('rest_api'), 'Every trade reaches this service through its REST API.'),
    payment_processor: z.null(),
    fees: z.array(z.never()).check(z.maxLength(0)),
    network_fee_notional: z.null(),
    network_fee_quantity: z.null(),
    parties: z.array(tradePartySchema).check(z.length(2)),
  })
  .check(
    z.meta({
      id: 'Trade',
      description:
        'A trade: fields in a fixed order, every optional field present (null when not given or not reached).',
    }),
  );

export const tradeResponse = messageOf(tradeSchema);
export const tradeListResponse = pageOf(tradeSchema);
