import { firstAttemptAtMs, type SettlementTrade } from './settlement.js';

/**
 * When a trade's settlement must next show progress, and how a settlement longer than one Step Functions
 * execution is split into legs. Pure arithmetic on times; callers pass the clock.
 */

/**
 * How long past the moment its workflow should next have written an open trade before the sweep treats the
 * execution as stuck or missing. It covers a task's retries (backoff 2, 4, 8, 16, 32, 64 s) in the usual
 * case; a sweep that comes earlier only finds the execution running and looks again later.
 */
export const SETTLEMENT_DUE_MARGIN_MS = 5 * 60_000;

/**
 * A freshly accepted trade is due at its first attempt: before that its execution only waits, so a missing
 * one strands nothing until then.
 */
export function dueAfterAcceptanceMs(
  trade: Pick<SettlementTrade, 'accepted_timestamp' | 'settlement_timestamp'>,
): number {
  return firstAttemptAtMs(trade) + SETTLEMENT_DUE_MARGIN_MS;
}

/** After a settlement step wrote the trade at `atMs`, the next attempt comes one session later. */
export function dueAfterStepMs(atMs: number, sessionSeconds: number): number {
  return atMs + sessionSeconds * 1000 + SETTLEMENT_DUE_MARGIN_MS;
}

export { MAX_LEG_SECONDS } from './settlement-leg-limit.js';

/**
 * Legs are fixed slices of time counted from acceptance: leg n covers [accepted + (n-1) x length,
 * accepted + n x length). Whoever starts a leg (the request storing the trade, the leg before it, the sweep,
 * the local runner resuming) derives the same number and the same input from the trade and the time, so a
 * repeated start names the same execution and is harmless.
 */
export function legAt(trade: Pick<SettlementTrade, 'accepted_timestamp'>, atMs: number, legSeconds: number): number {
  return Math.max(1, Math.floor((atMs - trade.accepted_timestamp) / (legSeconds * 1000)) + 1);
}

export function legEndsAtMs(
  trade: Pick<SettlementTrade, 'accepted_timestamp'>,
  leg: number,
  legSeconds: number,
): number {
  return trade.accepted_timestamp + leg * legSeconds * 1000;
}

/**
 * The execution of a leg: the trade id for the first, `<trade_id>-<n>` after it, so the
 * console's search by trade id finds every leg. A trade id is a UUID, so no other trade's id looks like a leg.
 */
export function executionNameOf(tradeId: string, leg: number): string {
  return leg === 1 ? tradeId : `${tradeId}-${leg}`;
}
