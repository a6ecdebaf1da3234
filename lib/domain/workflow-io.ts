/**
 * What the settlement workflow passes around: its execution input and each task's input and result. The
 * workflow definition (infra) and the task functions (lib, functions) both use these shapes, so they live in
 * lib, which never imports from infra.
 */

import { executionNameOf } from './settlement-schedule.js';

/**
 * The execution input. Times are ISO 8601 (UTC, `Z`) because a Wait state's TimestampPath needs them.
 *
 * A Standard execution lasts at most a year, so a settlement runs in legs (`lib/domain/settlement-schedule.ts`):
 * leg 1 is the execution named by the trade id, leg n `<trade_id>-<n>`. A leg ends at `leg_ends_at`; when the
 * settlement time is later (`continues`), the leg only waits for its end, and a leg whose sessions would run
 * past its end waits for it too; then it starts the next leg and succeeds.
 */
export interface SettlementExecutionInput {
  trade_id: string;
  settlement_at: string;
  session_interval_seconds: number;
  leg: number;
  leg_ends_at: string;
  continues: boolean;
}

/** The execution an input is for: the trade id, `<trade_id>-<n>` for leg n > 1. */
export function executionNameOfInput(input: Pick<SettlementExecutionInput, 'trade_id' | 'leg'>): string {
  return executionNameOf(input.trade_id, input.leg);
}

/** `continued`: the leg ended and started the next one (the continue task's result). */
export type SettlementTaskOutcome = 'settled' | 'outstanding' | 'defaulted' | 'terminated' | 'continued';

/**
 * What every task returns. The attempt task sets `past_deadline` when an outstanding trade has reached its
 * deadline; it decides that with the service clock (not the workflow's), so tests that move the clock move
 * deadlines too. It sets `leg_over` when the next session would start after the leg's end. `terminated`
 * means the trade was already closed by an earlier run: nothing left to do.
 */
export interface SettlementTaskResult {
  outcome: SettlementTaskOutcome;
  past_deadline?: boolean;
  leg_over?: boolean;
  [detail: string]: unknown;
}

/**
 * What making sure a trade has a live execution did: `started` one (there was none), found it `running`,
 * `redriven` a failed one, or found it `finished` (succeeded; the trade is closed or about to be).
 */
export type EnsureOutcome = 'started' | 'running' | 'redriven' | 'finished';

/**
 * What each task receives: the trade id (the task reads everything else from the table); the attempt task
 * also gets the leg's end, the continue task the leg's number.
 */
export interface SettlementTaskInput {
  trade_id: string;
  leg_ends_at?: string;
  leg?: number;
}

/** The execution input of leg `leg.number` (ending at `leg.endsAtMs`) of a trade whose first attempt is due at `settlementAtMs`. */
export function settlementExecutionInput(
  tradeId: string,
  settlementAtMs: number,
  sessionIntervalSeconds: number,
  leg: { number: number; endsAtMs: number },
): SettlementExecutionInput {
  return {
    trade_id: tradeId,
    settlement_at: new Date(settlementAtMs).toISOString(),
    session_interval_seconds: sessionIntervalSeconds,
    leg: leg.number,
    leg_ends_at: new Date(leg.endsAtMs).toISOString(),
    continues: settlementAtMs >= leg.endsAtMs,
  };
}
