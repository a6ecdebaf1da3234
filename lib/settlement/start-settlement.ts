import type { AppContext } from '../context.js';
// Every function that starts settlement executions loads the Step Functions client with its code, in the
// Lambda init phase (full CPU), rather than through loadContext's import on its first request.
import '../runtime/step-functions-workflow.js';
import { firstAttemptAtMs } from '../domain/settlement.js';
import { legAt, legEndsAtMs } from '../domain/settlement-schedule.js';
import { getTrade } from '../store/trades.js';
import { type Trade } from '../domain/trade.js';
import {
  executionNameOfInput,
  settlementExecutionInput,
  type EnsureOutcome,
  type SettlementExecutionInput,
  type SettlementTaskResult,
} from '../domain/workflow-io.js';

type TradeTimes = Pick<Trade, 'trade_id' | 'accepted_timestamp' | 'settlement_timestamp'>;

/**
 * The input of a trade's settlement execution for leg `leg`, by default the leg the service clock is in
 * (leg 1 for a trade just accepted). It depends on the trade and the leg only, so every starter of a leg
 * sends the same input, which Step Functions takes as a repeat of a running execution.
 */
export function settlementInputFor(
  ctx: AppContext,
  trade: TradeTimes,
  leg = legAt(trade, ctx.clock.nowMs(), ctx.config.SETTLEMENT_LEG_SECONDS),
): SettlementExecutionInput {
  return settlementExecutionInput(trade.trade_id, firstAttemptAtMs(trade), ctx.config.SETTLEMENT_SESSION_SECONDS, {
    number: leg,
    endsAtMs: legEndsAtMs(trade, leg, ctx.config.SETTLEMENT_LEG_SECONDS),
  });
}

/**
 * Starts the settlement workflow of a trade: the execution of its current leg (for a trade just accepted,
 * the one named by `trade_id`). On AWS that is Step Functions (the context's workflow, from STATE_MACHINE_ARN
 * set by the stack); locally the in-process runner the local runtime puts in the context. Starting the same
 * leg twice is harmless in both: Step Functions never runs a second execution of a name, and the local runner
 * keeps one execution per name.
 */
export async function startSettlement(ctx: AppContext, trade: TradeTimes): Promise<void> {
  await ctx.workflow.start(settlementInputFor(ctx, trade));
}

export type SweepOutcome = EnsureOutcome;

/**
 * Makes sure an open trade has a live execution (nothing may strand a trade). Used by the settlement sweep:
 * a trade whose execution never started gets one; one whose execution failed (task retries exhausted,
 * timeout, abort) runs again from the failed state (`SettlementWorkflow.ensure`). Tasks are idempotent, so
 * any of this is safe to repeat.
 */
export async function ensureSettlementRunning(ctx: AppContext, trade: TradeTimes): Promise<SweepOutcome> {
  // The leg the clock is in: a leg ends by starting the next, so the live execution is this leg's.
  return ctx.workflow.ensure(settlementInputFor(ctx, trade));
}

/**
 * The workflow's "Continue in next execution" task: leg `leg` has reached its end with the trade still open,
 * so the trade's next leg starts (named `<trade_id>-<leg + 1>`). A repeat (a retried task, a redriven leg)
 * starts the same name with the same input: harmless. A trade that closed meanwhile needs no next leg.
 */
export async function continueSettlement(ctx: AppContext, tradeId: string, leg: number): Promise<SettlementTaskResult> {
  const trade = await getTrade(ctx, tradeId, { consistent: true });
  if (!trade) throw new Error(`settlement task for unknown trade ${tradeId}`);
  if (trade.trade_state === 'terminated')
    return { outcome: 'terminated', trade_state: trade.trade_state, settlement_state: trade.settlement_state };
  const next = settlementInputFor(ctx, trade, leg + 1);
  await ctx.workflow.start(next);
  return { outcome: 'continued', next_execution: executionNameOfInput(next) };
}
