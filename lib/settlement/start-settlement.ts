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
import type { Trade } from '../store/trades.js';
import { settlementExecutionInput, type EnsureOutcome, type SettlementExecutionInput } from './workflow-io.js';

/**
 * Starts the settlement workflow of a trade: an execution named by `trade_id`. On AWS that is Step Functions
 * (the context's workflow, from STATE_MACHINE_ARN set by the stack); locally the in-process runner the local
 * runtime puts in the context. Starting the same trade twice is harmless in both: Step Functions never runs a
 * second execution of a name, and the local runner keeps one execution per trade.
 */
export function settlementInputFor(ctx: AppContext, trade: Pick<Trade, 'trade_id' | 'accepted_timestamp' | 'settlement_timestamp'>): SettlementExecutionInput {
  return settlementExecutionInput(trade.trade_id, firstAttemptAtMs(trade), ctx.config.SETTLEMENT_SESSION_SECONDS);
}

/** The ARN of the execution named by `tradeId` (executions are named by trade, design section 7). */
export function executionArnOf(stateMachineArn: string, tradeId: string): string {
  return `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${tradeId}`;
}

/**
 * StartExecution of the trade's execution. Step Functions answers a repeat with the same input while the
 * execution is open with success, and refuses a name already used by a closed one (ExecutionAlreadyExists):
 * either way the trade is (or was) being settled, so both count as done.
 */
async function startExecution(sfn: SFNClient, stateMachineArn: string, input: SettlementExecutionInput): Promise<void> {
  try {
    await sfn.send(new StartExecutionCommand({ stateMachineArn, name: input.trade_id, input: JSON.stringify(input) }));
  } catch (error) {
    if (!(error instanceof ExecutionAlreadyExists)) throw error;
  }
}

export async function startSettlement(ctx: AppContext, trade: Pick<Trade, 'trade_id' | 'accepted_timestamp' | 'settlement_timestamp'>): Promise<void> {
  const input = settlementInputFor(ctx, trade);
  const { workflow } = ctx;
  if (workflow.kind === 'step-functions') return startExecution(workflow.client, workflow.stateMachineArn, input);
  if (workflow.kind === 'local') return workflow.start(input);
  throw new Error('no settlement workflow: STATE_MACHINE_ARN is not set and no local runner is registered');
}

export type SweepOutcome = EnsureOutcome;

/**
 * Makes sure an open trade has a live execution (design section 7: nothing may strand a trade). Used by the
 * settlement sweep: a trade whose execution never started gets one; one whose execution failed (task
 * retries exhausted, timeout, abort) is redriven from the failed state, which keeps its name and history.
 * Asks first rather than starting first: StartExecution succeeds for a running execution with the same
 * input, which would count every live trade as "started". Locally the runner does the same for its own
 * executions. Tasks are idempotent, so any of this is safe to repeat.
 */
export async function ensureSettlementRunning(ctx: AppContext, trade: Pick<Trade, 'trade_id' | 'accepted_timestamp' | 'settlement_timestamp'>): Promise<SweepOutcome> {
  const { workflow } = ctx;
  if (workflow.kind === 'local') return workflow.ensure(settlementInputFor(ctx, trade));
  if (workflow.kind !== 'step-functions') throw new Error('no settlement workflow: STATE_MACHINE_ARN is not set and no local runner is registered');
  const { client: sfn, stateMachineArn } = workflow;
  const executionArn = executionArnOf(stateMachineArn, trade.trade_id);
  let status: string | undefined;
  try {
    status = (await sfn.send(new DescribeExecutionCommand({ executionArn }))).status;
  } catch (error) {
    if (!(error instanceof ExecutionDoesNotExist)) throw error;
    // If the request that stored the trade starts it in the meantime, this start is a harmless repeat.
    await startExecution(sfn, stateMachineArn, settlementInputFor(ctx, trade));
    return 'started';
  }
  if (status === 'RUNNING' || status === 'PENDING_REDRIVE') return 'running';
  if (status === 'SUCCEEDED') return 'finished';
  await sfn.send(new RedriveExecutionCommand({ executionArn }));
  return 'redriven';
}
