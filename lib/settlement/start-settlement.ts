import {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  RedriveExecutionCommand,
  type SFNClient,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';
import type { AppContext } from '../context.js';
import { firstAttemptAtMs } from '../domain/settlement.js';
import { executionNameOf, legAt, legEndsAtMs } from '../domain/settlement-schedule.js';
import { getTrade } from '../store/trades.js';
import { type Trade } from '../domain/trade.js';
import {
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

/** The execution an input is for: the trade id, `<trade_id>-<n>` for leg n > 1. */
export function executionNameOfInput(input: Pick<SettlementExecutionInput, 'trade_id' | 'leg'>): string {
  return executionNameOf(input.trade_id, input.leg ?? 1);
}

/** The ARN of the execution named `name` (a trade id, or a trade id and leg). */
export function executionArnOf(stateMachineArn: string, name: string): string {
  return `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;
}

/**
 * StartExecution of the trade's execution. Step Functions answers a repeat with the same input while the
 * execution is open with success, and refuses a name already used by a closed one (ExecutionAlreadyExists):
 * either way the trade is (or was) being settled, so both count as done.
 */
async function startExecution(sfn: SFNClient, stateMachineArn: string, input: SettlementExecutionInput): Promise<void> {
  try {
    await sfn.send(
      new StartExecutionCommand({ stateMachineArn, name: executionNameOfInput(input), input: JSON.stringify(input) }),
    );
  } catch (error) {
    if (!(error instanceof ExecutionAlreadyExists)) throw error;
  }
}

/**
 * Starts the settlement workflow of a trade: the execution of its current leg (for a trade just accepted,
 * the one named by `trade_id`). On AWS that is Step Functions (the context's workflow, from STATE_MACHINE_ARN
 * set by the stack); locally the in-process runner the local runtime puts in the context. Starting the same
 * leg twice is harmless in both: Step Functions never runs a second execution of a name, and the local runner
 * keeps one execution per name.
 */
export async function startSettlement(ctx: AppContext, trade: TradeTimes): Promise<void> {
  return startLeg(ctx, settlementInputFor(ctx, trade));
}

async function startLeg(ctx: AppContext, input: SettlementExecutionInput): Promise<void> {
  const { workflow } = ctx;
  if (workflow.kind === 'step-functions') return startExecution(workflow.client, workflow.stateMachineArn, input);
  if (workflow.kind === 'local') return workflow.start(input);
  throw new Error('no settlement workflow: STATE_MACHINE_ARN is not set and no local runner is registered');
}

export type SweepOutcome = EnsureOutcome;

/**
 * Makes sure an open trade has a live execution (nothing may strand a trade). Used by the
 * settlement sweep: a trade whose execution never started gets one; one whose execution failed (task
 * retries exhausted, timeout, abort) is redriven from the failed state, which keeps its name and history.
 * Asks first rather than starting first: StartExecution succeeds for a running execution with the same
 * input, which would count every live trade as "started". Locally the runner does the same for its own
 * executions. Tasks are idempotent, so any of this is safe to repeat.
 */
export async function ensureSettlementRunning(ctx: AppContext, trade: TradeTimes): Promise<SweepOutcome> {
  const { workflow } = ctx;
  // The leg the clock is in: a leg ends by starting the next, so the live execution is this leg's.
  const input = settlementInputFor(ctx, trade);
  if (workflow.kind === 'local') return workflow.ensure(input);
  if (workflow.kind !== 'step-functions')
    throw new Error('no settlement workflow: STATE_MACHINE_ARN is not set and no local runner is registered');
  const { client: sfn, stateMachineArn } = workflow;
  const executionArn = executionArnOf(stateMachineArn, executionNameOfInput(input));
  let status: string | undefined;
  try {
    status = (await sfn.send(new DescribeExecutionCommand({ executionArn }))).status;
  } catch (error) {
    if (!(error instanceof ExecutionDoesNotExist)) throw error;
    // If the request that stored the trade starts it in the meantime, this start is a harmless repeat.
    await startExecution(sfn, stateMachineArn, input);
    return 'started';
  }
  if (status === 'RUNNING' || status === 'PENDING_REDRIVE') return 'running';
  if (status === 'SUCCEEDED') return 'finished';
  await sfn.send(new RedriveExecutionCommand({ executionArn }));
  return 'redriven';
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
  await startLeg(ctx, next);
  return { outcome: 'continued', next_execution: executionNameOfInput(next) };
}

/**
 * The attempt task's answer, told whether the leg is over: an outstanding trade whose next session would
 * start after the leg's end waits for it and continues in the next leg, so no execution outlives its bound.
 */
export function withLegEnd(
  ctx: AppContext,
  result: SettlementTaskResult,
  legEndsAt: string | undefined,
): SettlementTaskResult {
  if (result.outcome !== 'outstanding' || result.past_deadline || legEndsAt === undefined) return result;
  const nextSessionMs = ctx.clock.nowMs() + ctx.config.SETTLEMENT_SESSION_SECONDS * 1000;
  return nextSessionMs >= Date.parse(legEndsAt) ? { ...result, leg_over: true } : result;
}
