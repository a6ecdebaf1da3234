import { Money, plain } from './money.js';
import type { ProductType, Side } from './trade-report.js';

/**
 * Pure settlement decisions for a reported trade. The workflow tasks read the trade and balances, ask these
 * functions what to do, and write the answer in one conditional transaction; nothing here touches storage
 * or the clock, so every decision can be replayed in a test.
 */

export type TradeState = 'accepted' | 'active' | 'terminated';

/** Per party and per trade. `null` until the first attempt. */
export type SettlementState =
  | null
  | 'obligations_outstanding'
  | 'current_obligations_met'
  | 'counterparty_defaulted'
  | 'settled'
  | 'defaulted';

/** The fields settlement needs; a stored trade built from a `TradeReport` has all of them. */
export interface SettlementParty {
  side: Side;
  participant_code: string;
  account_label: string;
  /** The asset this party receives. */
  asset: string;
  /** The amount this party receives, a decimal string. */
  amount: string;
  settling: boolean;
}

export interface SettlementTrade {
  product_type: ProductType;
  accepted_timestamp: number;
  settlement_timestamp: number | null;
  expiry_timestamp: number | null;
  parties: readonly SettlementParty[];
}

/** What one settling party must hand over, and what it gets back, when the trade settles. */
export interface Obligation {
  /** Index into `trade.parties`. */
  party: number;
  side: Side;
  participant_code: string;
  account_label: string;
  deliver_asset: string;
  deliver_amount: string;
  receive_asset: string;
  receive_amount: string;
}

/**
 * The seller delivers the base, which is exactly what the buyer receives; the buyer delivers the quote, which
 * is what the seller receives. A party with `settling: false` settles elsewhere and has no obligation here.
 */
export function obligations(trade: Pick<SettlementTrade, 'parties'>): Obligation[] {
  const buyer = partyIndex(trade, 'buy');
  const seller = partyIndex(trade, 'sell');
  const result: Obligation[] = [];
  for (const [self, other] of [
    [buyer, seller],
    [seller, buyer],
  ] as const) {
    const party = trade.parties[self] as SettlementParty;
    const counterparty = trade.parties[other] as SettlementParty;
    if (!party.settling) continue;
    result.push({
      party: self,
      side: party.side,
      participant_code: party.participant_code,
      account_label: party.account_label,
      deliver_asset: counterparty.asset,
      deliver_amount: counterparty.amount,
      receive_asset: party.asset,
      receive_amount: party.amount,
    });
  }
  return result.sort((a, b) => a.party - b.party);
}

export interface PartyDecision {
  /** Index into `trade.parties`. */
  party: number;
  side: Side;
  settlement_state: Exclude<SettlementState, null>;
  /** How much of its delivery asset the party still lacks ("0" when covered or not settling). */
  shortfall: string;
}

export type AttemptDecision =
  | { kind: 'settle'; settlement_state: 'settled'; parties: PartyDecision[]; obligations: Obligation[] }
  | { kind: 'outstanding'; settlement_state: 'obligations_outstanding'; parties: PartyDecision[] }
  | { kind: 'default'; settlement_state: 'defaulted'; parties: PartyDecision[] };

/** Available balance per side of the asset that side must deliver. A missing entry is an empty account. */
export type DeliveryBalances = Partial<Record<Side, Money | string>>;

/**
 * One settlement attempt. All settling parties covered -> settle, even at or past the deadline: the design
 * checks "settled?" before "past expiry?", and sessions are discrete, so the last attempt may land just after
 * the deadline and a funded trade should not default for that. Otherwise, at or past the deadline -> default
 * (the party that had its delivery ready is `counterparty_defaulted`, the other `defaulted`); before it ->
 * outstanding, each party `current_obligations_met` or `obligations_outstanding`.
 *
 * A party with no obligation (not settling) counts as having met it: it is never the one that defaulted.
 */
export function decideAttempt(input: {
  trade: Pick<SettlementTrade, 'parties'>;
  balances: DeliveryBalances;
  nowMs: number;
  deadlineMs: number;
}): AttemptDecision {
  const { trade, balances } = input;
  const owed = obligations(trade);
  const coverage = trade.parties.map((party, index) => {
    const obligation = owed.find((o) => o.party === index);
    if (!obligation) return { party: index, side: party.side, met: true, shortfall: new Money(0) };
    const available = new Money(balances[party.side] ?? 0);
    const required = new Money(obligation.deliver_amount);
    const shortfall = required.gt(available) ? required.minus(available) : new Money(0);
    return { party: index, side: party.side, met: shortfall.isZero(), shortfall };
  });

  const decide = (met: PartyDecision['settlement_state'], unmet: PartyDecision['settlement_state']): PartyDecision[] =>
    coverage.map((c) => ({
      party: c.party,
      side: c.side,
      settlement_state: c.met ? met : unmet,
      shortfall: plain(c.shortfall),
    }));

  if (coverage.every((c) => c.met)) {
    return { kind: 'settle', settlement_state: 'settled', parties: decide('settled', 'settled'), obligations: owed };
  }
  if (isPastDeadline(input.nowMs, input.deadlineMs)) {
    return { kind: 'default', settlement_state: 'defaulted', parties: decide('counterparty_defaulted', 'defaulted') };
  }
  return {
    kind: 'outstanding',
    settlement_state: 'obligations_outstanding',
    parties: decide('current_obligations_met', 'obligations_outstanding'),
  };
}

/** The deadline is the last moment a trade may still be unsettled; reaching it is being past it. */
export function isPastDeadline(nowMs: number, deadlineMs: number): boolean {
  return nowMs >= deadlineMs;
}

/** When the first attempt runs: the requested `settlement_timestamp`, else right after acceptance. */
export function firstAttemptAtMs(trade: Pick<SettlementTrade, 'accepted_timestamp' | 'settlement_timestamp'>): number {
  return Math.max(trade.accepted_timestamp, trade.settlement_timestamp ?? trade.accepted_timestamp);
}

/**
 * Forwards default at `expiry_timestamp` (the fixing date). Spot trades, and forwards reported without an
 * expiry, get the configured deadline counted from the first attempt rather than from acceptance: a spot
 * trade scheduled to settle later than `accepted + deadline` would otherwise default before its first try.
 * With no `settlement_timestamp` this is exactly `accepted_timestamp + spotDeadlineMs`.
 */
export function settlementDeadlineMs(
  trade: Pick<SettlementTrade, 'product_type' | 'accepted_timestamp' | 'settlement_timestamp' | 'expiry_timestamp'>,
  spotDeadlineMs: number,
): number {
  if (trade.product_type === 'forward' && trade.expiry_timestamp !== null) return trade.expiry_timestamp;
  return firstAttemptAtMs(trade) + spotDeadlineMs;
}

function partyIndex(trade: Pick<SettlementTrade, 'parties'>, side: Side): number {
  // Validation guarantees one party per side; a stored trade breaking that is corrupt, not a client error.
  const matches = trade.parties.filter((p) => p.side === side).length;
  if (trade.parties.length !== 2 || matches !== 1) {
    throw new Error(
      `settlement needs exactly one buy and one sell party (found ${matches} ${side} of ${trade.parties.length})`,
    );
  }
  return trade.parties.findIndex((p) => p.side === side);
}
