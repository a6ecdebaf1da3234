/**
 * What the settlement workflow passes around: its execution input and each task's input and result. The
 * workflow definition (infra) and the task functions (lib, functions) both use these shapes, so they live in
 * lib, which never imports from infra.
 */

/** The execution input. `settlement_at` is ISO 8601 (UTC, `Z`) because a Wait state's TimestampPath needs it. */
export interface SettlementExecutionInput {
  trade_id: string;
  settlement_at: string;
  session_interval_seconds: number;
}

export type SettlementTaskOutcome = 'settled' | 'outstanding' | 'defaulted' | 'terminated';

/**
 * What every task returns. The attempt task sets `past_deadline` when an outstanding trade has reached its
 * deadline; it decides that with the service clock (not the workflow's), so tests that move the clock move
 * deadlines too. `terminated` means the trade was already closed by an earlier run: nothing left to do.
 */
export interface SettlementTaskResult {
  outcome: SettlementTaskOutcome;
  past_deadline?: boolean;
  [detail: string]: unknown;
}

/**
 * What making sure a trade has a live execution did: `started` one (there was none), found it `running`,
 * `redriven` a failed one, or found it `finished` (succeeded; the trade is closed or about to be).
 */
export type EnsureOutcome = 'started' | 'running' | 'redriven' | 'finished';

/** What each task receives: only the trade id; the task reads everything else from the table. */
export interface SettlementTaskInput {
  trade_id: string;
}

/** The execution input for a trade whose first attempt is due at `settlementAtMs`. */
export function settlementExecutionInput(
  tradeId: string,
  settlementAtMs: number,
  sessionIntervalSeconds: number,
): SettlementExecutionInput {
  return {
    trade_id: tradeId,
    settlement_at: new Date(settlementAtMs).toISOString(),
    session_interval_seconds: sessionIntervalSeconds,
  };
}
