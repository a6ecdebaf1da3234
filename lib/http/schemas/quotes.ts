import * as z from 'zod/mini';
import { amount, described, epochMs, messageOf } from './common.js';

const quoteFields = {
  request_id: described(z.string(), 'The request id of the RFQ.'),
  participant_code: described(z.string(), 'Whose accounts trade.'),
  quoted_currency: z.string(),
  side: z.enum(['buy', 'sell']),
  quantity: amount('Quantity of the underlying.'),
  price: amount('Price per unit in the quoted currency, spread included.'),
  quote_id: z.string(),
  expire_ts: epochMs('The quote can be executed until then'),
  account_group: z.string(),
  account_label: z.string(),
  obo_participant: described(
    z.nullable(z.object({ participant_code: z.string(), account_group: z.string(), account_label: z.string() })),
    'The customer the platform trades for; null when the platform trades for itself.',
  ),
  underlying: z.string(),
  total_notional: amount('What the buyer pays or the seller receives, in the quoted currency.'),
  asset_cost_notional: amount('The asset alone, in the quoted currency (no fee is charged on top of the spread).'),
  spread_notional: amount(
    'What the spread added to (buy) or took from (sell) the reference price, over the whole quantity.',
  ),
  spread_bps: described(z.string(), "The platform's spread in basis points."),
  // The reference API's optional quote fields this service has no value for: present, null.
  settlement_type: z.null(),
  issuer_fee_payor_type: z.null(),
  issuer_fee_rate: z.null(),
  issuer_fee_amount: z.null(),
  payment_processor: z.null(),
};

const quoteSchema = z.object(quoteFields).check(z.meta({ id: 'Quote' }));

const convertQuoteSchema = z
  .object({
    ...quoteFields,
    total_notional: amount('Everything the participant pays: the asset cost plus the network fee notional.'),
    network_fee_notional: amount('The network fee in the quoted currency.'),
    network_fee_quantity: amount('The network fee in the underlying.'),
    main_quote_id: described(z.string(), 'The quote itself (`quote_id`).'),
    withdrawal_address: z.string(),
  })
  .check(z.meta({ id: 'ConvertQuote' }));

const instantQuoteSchema = z
  .object({
    ...quoteFields,
    underlying_currency: described(z.string(), 'The underlying, under the name the spec uses.'),
    transaction_timestamp: z.nullable(epochMs('When it was booked')),
  })
  .check(z.meta({ id: 'InstantPurchaseQuote' }));

const completed = described(z.literal('Completed'), 'Executions complete at once.');
const tradeIdsList = described(
  z.array(z.string()).check(z.minLength(1)),
  "The reference API's list of the execution's trades; the first is `trade_id`.",
);

export const quoteResponse = messageOf(quoteSchema);
export const convertQuoteResponse = messageOf(convertQuoteSchema);

export const executionResponse = messageOf(
  z.object({
    request_id: z.string(),
    quote: quoteSchema,
    trade_id: z.string(),
    trade_ids_list: tradeIdsList,
    status: completed,
    payment_amount: described(
      z.nullable(amount('')),
      'ACH funding: what the bank moves (trade amount plus the fee for a buy, minus it for a sell); null otherwise.',
    ),
  }),
);

export const convertExecutionResponse = messageOf(
  z.object({
    request_id: z.string(),
    quote: convertQuoteSchema,
    trade_id: z.string(),
    trade_ids_list: tradeIdsList,
    status: completed,
    withdrawal_request_id: described(z.string(), 'The `PENDING` withdrawal that custody confirms or fails.'),
  }),
);

/** Rewards and award funding: a purchase booked at once. */
export const instantPurchaseResponse = messageOf(
  z.object({
    request_id: z.string(),
    quote: instantQuoteSchema,
    trade_id: z.string(),
    trade_ids_list: tradeIdsList,
    status: completed,
    asset_cost_notional: amount('What the platform paid for the asset, in the quoted currency.'),
  }),
);

export const distributionResponse = messageOf(
  z.object({
    request_id: described(z.string(), "The distribution's id: the X-Request-Id when one was sent."),
    confirms: z.array(z.object({ participant_code: z.string(), trade_id: z.string(), trade_ids_list: tradeIdsList })),
  }),
);
