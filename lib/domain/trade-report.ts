import * as z from 'zod/mini';
import { Money, formatAmount } from './money.js';
import {
  ANONYMOUS_PARTICIPANT,
  type AssetPair,
  type TradeReportBody,
  type TradeReportPartyBody,
  assetPairOf,
  isAbsent,
  settlingValue,
  tradeReportBody,
} from './trade-report-fields.js';
import {
  type AmountMethod,
  type TradeReportContext,
  assetReceived,
  inReportOrder,
  priceAndQuantityAmounts,
  rulesAcrossFields,
} from './trade-report-rules.js';
import { formatIssues } from './validation.js';

/**
 * Validation of a reported trade (`POST /trades`) into the record the service stores, settles and echoes:
 * one zod schema, the body's fields (`trade-report-fields.ts`) with the rules across them
 * (`trade-report-rules.ts`), then the parsed body normalised into a `TradeReport`.
 */

export { ANONYMOUS_PARTICIPANT, TRADE_REPORT_LIMITS } from './trade-report-fields.js';
export { priceMatchesAmounts, quoteAmountFor } from './trade-report-rules.js';
export type { AmountMethod, TradeReportContext } from './trade-report-rules.js';

export type Side = 'buy' | 'sell';
export type ProductType = 'spot' | 'forward';
export type TradeType = 'regular' | 'block';
export type LiquidityIndicator = 'added' | 'removed';

export interface TradeReportParty {
  side: Side;
  participant_code: string;
  /** The asset this party receives: the base for the buyer, the quote for the seller. */
  asset: string;
  /** What this party receives, fixed-point with exactly the asset's decimals. */
  amount: string;
  settling: boolean;
  account_label: string;
  liquidity_indicator: LiquidityIndicator | null;
  client_order_id: string | null;
  order_id: string | null;
  execution_id: string | null;
}

export interface TradeReport {
  client_trade_id: string;
  /** The order book session; empty when the trade came from none (shown as null, `tradeView`). */
  session_id: string;
  /**
   * A quote's spread, on the trade its execution made: the quote's `spread_notional` (in the quoted currency)
   * and `spread_bps`. Absent on reported trades, rewards and awards (shown as null).
   */
  spread_notional?: string;
  spread_bps?: string;
  trade_reporter: string;
  reporting_party: string | null;
  settlement_schedule: string | null;
  platform_code: string;
  market_identifier_code: string | null;
  symbol: string;
  product_type: ProductType;
  trade_type: TradeType;
  /** As submitted: any precision is accepted and echoed unchanged. */
  trade_price: string;
  /** The buyer's amount (method A: the submitted quantity; method B: the buyer's amount). */
  trade_quantity: string;
  amount_method: AmountMethod;
  physical_delivery: true;
  transaction_timestamp: number;
  comment: string | null;
  parties_anonymous: boolean;
  settlement_price_index_id: string | null;
  settlement_timestamp: number | null;
  expiry_timestamp: number | null;
  bank_fee: string | null;
  contract_size: 1;
  /** Base asset of `symbol`. */
  underlying: string;
  /** Quote asset of `symbol`. */
  quoted_currency: string;
  /** In submission order; exactly one `buy` and one `sell`. */
  parties: [TradeReportParty, TradeReportParty];
}

type TradeReportResult = { ok: true; value: TradeReport } | { ok: false; errors: string[] };

const DEFAULT_ACCOUNT_LABEL = 'general';

/**
 * The schema a report is validated with: the body's fields and the rules across them, which need the caller
 * and the time, hence one per call (the API description shows `tradeReportBody`, the same fields).
 */
function tradeReportSchema(ctx: TradeReportContext) {
  return tradeReportBody.check(rulesAcrossFields(ctx));
}

export function validateTradeReport(body: unknown, ctx: TradeReportContext): TradeReportResult {
  const parsed = z.safeParse(tradeReportSchema(ctx), body);
  if (!parsed.success) return { ok: false, errors: formatIssues(inReportOrder(parsed.error.issues), 'body') };
  return { ok: true, value: toTradeReport(parsed.data) };
}

/** A body that passed every rule, with its defaults filled in and both amounts fixed at their assets' precision. */
function toTradeReport(body: TradeReportBody): TradeReport {
  const pair = assetPairOf(body.symbol);
  const [first, second] = body.parties;
  // The rules guarantee these; a failure here is a bug in them, not a client error.
  if (!pair || !first || !second) {
    throw new Error('toTradeReport: a report that passed validation has no pair or parties');
  }
  const method: AmountMethod = isAbsent(body.trade_quantity) ? 'amounts_per_party' : 'price_and_quantity';
  const amountOf = partyAmounts(body, pair, method);
  const parties: [TradeReportParty, TradeReportParty] = [
    toTradeReportParty(first, amountOf(first)),
    toTradeReportParty(second, amountOf(second)),
  ];
  return {
    client_trade_id: body.client_trade_id,
    session_id: body.session_id ?? '',
    trade_reporter: body.trade_reporter,
    reporting_party: body.reporting_party ?? null,
    settlement_schedule: body.settlement_schedule ?? null,
    platform_code: body.platform_code,
    market_identifier_code: body.market_identifier_code ?? null,
    symbol: body.symbol,
    product_type: body.product_type,
    trade_type: body.trade_type,
    trade_price: body.trade_price,
    trade_quantity: parties.find((party) => party.side === 'buy')?.amount as string,
    amount_method: method,
    physical_delivery: true,
    transaction_timestamp: body.transaction_timestamp,
    comment: body.comment ?? null,
    parties_anonymous: body.parties_anonymous,
    settlement_price_index_id: body.settlement_price_index_id ?? null,
    settlement_timestamp: body.settlement_timestamp ?? null,
    expiry_timestamp: body.expiry_timestamp ?? null,
    bank_fee: body.bank_fee ?? null,
    contract_size: 1,
    underlying: pair.base.symbol,
    quoted_currency: pair.quote.symbol,
    parties,
  };
}

/** Method A: the buyer gets the quantity, the seller price × quantity. Method B: each party its own amount. */
function partyAmounts(
  body: TradeReportBody,
  pair: AssetPair,
  method: AmountMethod,
): (party: TradeReportPartyBody) => string {
  if (method === 'amounts_per_party') {
    return (party) => formatAmount(new Money(party.amount as string), assetReceived(pair, party.side));
  }
  const amounts = priceAndQuantityAmounts(body.trade_price, body.trade_quantity as string, pair);
  if ('problem' in amounts) throw new Error(`toTradeReport: method A amounts of a valid report: ${amounts.problem}`);
  return (party) => (party.side === 'buy' ? amounts.buyer : amounts.seller);
}

function toTradeReportParty(party: TradeReportPartyBody, amount: string): TradeReportParty {
  return {
    side: party.side,
    participant_code: party.participant_code,
    asset: party.asset,
    amount,
    settling: settlingValue(party.settling, party.participant_code === ANONYMOUS_PARTICIPANT) as boolean,
    account_label: party.account_label ?? DEFAULT_ACCOUNT_LABEL,
    liquidity_indicator: party.liquidity_indicator ?? null,
    client_order_id: party.client_order_id ?? null,
    order_id: party.order_id ?? null,
    execution_id: party.execution_id ?? null,
  };
}
