import type { SettlementState, TradeState } from './settlement.js';
import type { AmountMethod, TradeReport, TradeReportParty } from './trade-report.js';

/**
 * A trade as the service holds it (the record behind `POST /trades` and the settlement workflow, and the
 * trades quote executions, rewards and awards book already settled), how one is made from a report, and how
 * clients see it. Its items and access patterns are in lib/store/trades.ts.
 */

export interface TradeParty extends TradeReportParty {
  /** Group of this party's accounts: its participant's platform code. null for an `Anonymous` party. */
  account_group: string | null;
  settlement_state: SettlementState;
  obligations_outstanding_timestamp: number | null;
  current_obligations_met_timestamp: number | null;
}

export interface Trade extends Omit<TradeReport, 'parties' | 'amount_method'> {
  trade_id: string;
  amount_method: AmountMethod;
  trade_state: TradeState;
  settlement_state: SettlementState;
  accepted_timestamp: number;
  current_obligations_met_timestamp: number | null;
  obligations_outstanding_timestamp: number | null;
  settled_timestamp: number | null;
  defaulted_timestamp: number | null;
  last_update: number;
  parties: [TradeParty, TradeParty];
  /** Platforms that may read the trade: the reporter first, then the platforms of the named parties. */
  visible_to: string[];
  /**
   * How many status changes the trade has been through (its creation is 1): the `sequence` of its
   * trade.status_changed events. Each change increments it in the same conditioned update that records its
   * event, so it is known without another read. A trade stored before events has none (read as 1).
   */
  status_sequence: number;
}

/** What a caller knows about each party beyond the report: where its accounts live. */
interface PartyAccounts {
  /** Per party, in report order: the participant's platform code, or null for `Anonymous`. */
  accountGroups: [string | null, string | null];
}

/**
 * A freshly reported trade: `accepted`, no settlement attempted. Everyone who may see it is derived from the
 * parties, so the reporter and each party's platform find it in `GET /trades`.
 */
export function acceptedTrade(report: TradeReport, options: PartyAccounts & { tradeId: string; nowMs: number }): Trade {
  const { amount_method, parties, ...fields } = report;
  return {
    ...fields,
    trade_id: options.tradeId,
    amount_method,
    trade_state: 'accepted',
    settlement_state: null,
    accepted_timestamp: options.nowMs,
    current_obligations_met_timestamp: null,
    obligations_outstanding_timestamp: null,
    settled_timestamp: null,
    defaulted_timestamp: null,
    last_update: options.nowMs,
    parties: [
      withAccounts(parties[0], options.accountGroups[0], null),
      withAccounts(parties[1], options.accountGroups[1], null),
    ],
    visible_to: visibleTo(report.platform_code, options.accountGroups),
    status_sequence: 1,
  };
}

/**
 * A trade that settled the moment it was booked (an executed quote, a reward, an award): `terminated` /
 * `settled` with every settlement timestamp at `nowMs`. The caller books its balance movement in the same
 * transaction as `tradeItems(trade)`.
 */
export function settledTrade(report: TradeReport, options: PartyAccounts & { tradeId: string; nowMs: number }): Trade {
  const trade = acceptedTrade(report, options);
  const now = options.nowMs;
  return {
    ...trade,
    trade_state: 'terminated',
    settlement_state: 'settled',
    current_obligations_met_timestamp: now,
    settled_timestamp: now,
    parties: [
      { ...trade.parties[0], settlement_state: 'settled', current_obligations_met_timestamp: now },
      { ...trade.parties[1], settlement_state: 'settled', current_obligations_met_timestamp: now },
    ],
  };
}

function withAccounts(party: TradeReportParty, accountGroup: string | null, state: SettlementState): TradeParty {
  return {
    ...party,
    account_group: accountGroup,
    settlement_state: state,
    obligations_outstanding_timestamp: null,
    current_obligations_met_timestamp: null,
  };
}

function visibleTo(reporter: string, accountGroups: readonly (string | null)[]): string[] {
  const platforms = [reporter];
  for (const group of accountGroups) if (group && !platforms.includes(group)) platforms.push(group);
  return platforms;
}

/**
 * A trade as clients see it: the reference API's trade shape, fields in a fixed order, every optional field
 * present (null when not given or not reached) so clients can rely on the keys. What only the service uses
 * (how amounts were given, account groups, who may see the trade) stays out.
 */
export function tradeView(trade: Trade) {
  // What the quote-currency side receives: price x quantity, rounded once at its precision. No fee is
  // charged on top of a trade here, so it is both the total and the asset's cost.
  const notional = trade.parties.find((party) => party.side === 'sell')!.amount;
  return {
    trade_id: trade.trade_id,
    batch_trade_id: null,
    client_trade_id: trade.client_trade_id,
    // No session (an empty one included) is null, as every optional field without a value is.
    session_id: trade.session_id === '' ? null : trade.session_id,
    trade_reporter: trade.trade_reporter,
    trade_reporter_code: null,
    reporting_party: trade.reporting_party,
    settlement_schedule: trade.settlement_schedule,
    platform_code: trade.platform_code,
    market_identifier_code: trade.market_identifier_code,
    symbol: trade.symbol,
    product_type: trade.product_type,
    trade_type: trade.trade_type,
    trade_price: trade.trade_price,
    trade_quantity: trade.trade_quantity,
    physical_delivery: trade.physical_delivery,
    transaction_timestamp: trade.transaction_timestamp,
    comment: trade.comment,
    parties_anonymous: trade.parties_anonymous,
    settlement_price_index_id: trade.settlement_price_index_id,
    settlement_timestamp: trade.settlement_timestamp,
    expiry_timestamp: trade.expiry_timestamp,
    bank_fee: trade.bank_fee,
    contract_size: trade.contract_size,
    underlying: trade.underlying,
    quoted_currency: trade.quoted_currency,
    trade_state: trade.trade_state,
    settlement_state: trade.settlement_state,
    accepted_timestamp: trade.accepted_timestamp,
    current_obligations_met_timestamp: trade.current_obligations_met_timestamp,
    obligations_outstanding_timestamp: trade.obligations_outstanding_timestamp,
    settled_timestamp: trade.settled_timestamp,
    defaulted_timestamp: trade.defaulted_timestamp,
    last_update: trade.last_update,
    total_notional: notional,
    asset_cost_notional: notional,
    // A trade made from a quote keeps the quote's spread. Documented reference fields for products this
    // service doesn't have (issuer fees, payment processors, dynamic fees, on-chain network fees on the trade
    // itself): present, with no value.
    spread_notional: trade.spread_notional ?? null,
    spread_bps: trade.spread_bps ?? null,
    issuer_fee_rate: null,
    issuer_fee_amount: null,
    issuer_fee_payor_type: null,
    // Every trade reaches this service through its REST API.
    origin: 'rest_api',
    payment_processor: null,
    fees: [],
    network_fee_notional: null,
    network_fee_quantity: null,
    parties: trade.parties.map(partyView),
  };
}

export type TradeView = ReturnType<typeof tradeView>;

function partyView(party: TradeParty) {
  return {
    side: party.side,
    participant_code: party.participant_code,
    asset: party.asset,
    amount: party.amount,
    settling: party.settling,
    account_label: party.account_label,
    liquidity_indicator: party.liquidity_indicator,
    client_order_id: party.client_order_id,
    order_id: party.order_id,
    execution_id: party.execution_id,
    settlement_state: party.settlement_state,
    obligations_outstanding_timestamp: party.obligations_outstanding_timestamp,
    current_obligations_met_timestamp: party.current_obligations_met_timestamp,
    // The reference's party fields for collateral, margin and multi-tenant accounts: not offered here.
    collateral_percentage: null,
    account_profile: null,
    trader: null,
    zrn: null,
    manual_order_indicator: null,
  };
}
