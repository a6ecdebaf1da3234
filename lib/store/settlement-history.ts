import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { queryAll } from './table/query.js';
import { keys } from './keys.js';
import { readInteger, readOptionalInteger } from './table/integers.js';
import type { AppContext } from '../context.js';
import { writtenUnlessConditionFailed } from './table/conditional.js';

/**
 * The local settlement runner's record of each execution, kept in DynamoDB beside the trade so another
 * process (the ops CLI, a benchmark) can read it: the local counterpart of Step Functions' execution history.
 * On AWS the history lives in Step Functions and nothing is written here.
 */

export type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'ABORTED' | 'TIMED_OUT' | 'INTERRUPTED';

interface SettlementExecution {
  trade_id: string;
  execution_id: string;
  /** What Step Functions would name it: the trade id, `<trade_id>-<n>` for leg n of a long settlement. */
  execution_name: string;
  /** The runner that runs it (host, pid, runner id), so a run whose process died can be told from a live one. */
  owner: string | null;
  status: ExecutionStatus;
  started_at: number;
  stopped_at: number | null;
  error: string | null;
}

/** One event of an execution, as the workflow engine reported it. */
export interface SettlementEvent {
  sequence: number;
  /** StateEntered, StateExited, StateFailed, StateRetried, ExecutionStarted, ExecutionSucceeded, ... */
  type: string;
  state: string | null;
  state_type: string | null;
  at: number;
  /** Task exits: the task's `outcome` (settled, outstanding, defaulted, terminated). */
  outcome: string | null;
  past_deadline: boolean | null;
  error: string | null;
}

/**
 * A RUNNING execution is on the sparse `gsi2` index of running executions until it ends, so one left
 * RUNNING by a process that died is found (and closed) without reading every trade's history.
 */
export async function recordExecutionStart(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  tradeId: string,
  executionId: string,
  startedAtMs: number,
  owner: string,
  executionName: string = tradeId,
): Promise<void> {
  await ctx.db.send(
    new PutCommand({
      TableName: ctx.tables.main,
      Item: {
        ...keys.settlementExecution(tradeId, executionId),
        type: 'settlement_execution',
        trade_id: tradeId,
        execution_id: executionId,
        execution_name: executionName,
        owner,
        status: 'RUNNING',
        started_at: startedAtMs,
        gsi2pk: keys.runningExecutions(),
        gsi2sk: keys.runningExecutionSortKey(startedAtMs, tradeId, executionId),
      },
    }),
  );
}

export async function recordExecutionEnd(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  tradeId: string,
  executionId: string,
  status: Exclude<ExecutionStatus, 'RUNNING'>,
  stoppedAtMs: number,
  error?: string,
): Promise<void> {
  await ctx.db.send(
    new UpdateCommand({
      TableName: ctx.tables.main,
      Key: keys.settlementExecution(tradeId, executionId),
      UpdateExpression: 'SET #status = :status, stopped_at = :at, #error = :error REMOVE gsi2pk, gsi2sk',
      ExpressionAttributeNames: { '#status': 'status', '#error': 'error' },
      ExpressionAttributeValues: { ':status': status, ':at': stoppedAtMs, ':error': error ?? null },
    }),
  );
}

export async function recordExecutionEvent(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  tradeId: string,
  executionId: string,
  event: SettlementEvent,
): Promise<void> {
  await ctx.db.send(
    new PutCommand({
      TableName: ctx.tables.main,
      Item: {
        ...keys.settlementExecutionEvent(tradeId, executionId, event.sequence),
        // The item's `type` names the entity, as everywhere in the table; the event's own type goes beside it.
        ...event,
        type: 'settlement_event',
        event_type: event.type,
        trade_id: tradeId,
        execution_id: executionId,
      },
    }),
  );
}

/**
 * Closes an execution still RUNNING (conditioned on it, so a live run's own end is never overwritten) and
 * takes it off the index of running executions. Returns false when it had already ended.
 */
export async function closeRunningExecution(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  tradeId: string,
  executionId: string,
  status: Exclude<ExecutionStatus, 'RUNNING'>,
  nowMs: number,
  error: string | null = null,
): Promise<boolean> {
  return writtenUnlessConditionFailed(
    ctx.db.send(
      new UpdateCommand({
        TableName: ctx.tables.main,
        Key: keys.settlementExecution(tradeId, executionId),
        UpdateExpression: 'SET #status = :status, stopped_at = :at, #error = :error REMOVE gsi2pk, gsi2sk',
        ConditionExpression: '#status = :running',
        ExpressionAttributeNames: { '#status': 'status', '#error': 'error' },
        ExpressionAttributeValues: { ':status': status, ':running': 'RUNNING', ':at': nowMs, ':error': error },
      }),
    ),
  );
}

/**
 * Marks executions left RUNNING by a process that died as INTERRUPTED. Only the runner that is resuming
 * the trade calls this, before it starts its own execution.
 */
export async function interruptRunningExecutions(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  tradeId: string,
  nowMs: number,
): Promise<void> {
  const { executions } = await settlementHistory(ctx, tradeId);
  for (const execution of executions.filter((e) => e.status === 'RUNNING')) {
    await closeRunningExecution(
      ctx,
      tradeId,
      execution.execution_id,
      'INTERRUPTED',
      nowMs,
      'the process running it ended before it did',
    );
  }
}

/** Every execution recorded RUNNING, oldest first (the sparse index holds nothing else). */
export async function runningExecutions(
  ctx: Pick<AppContext, 'db' | 'tables'>,
): Promise<{ trade_id: string; execution_id: string; owner: string | null; started_at: number }[]> {
  const items = await queryAll(ctx, {
    TableName: ctx.tables.main,
    IndexName: 'gsi2',
    KeyConditionExpression: 'gsi2pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.runningExecutions() },
  });
  return items.map((item) => ({
    trade_id: item.trade_id,
    execution_id: item.execution_id,
    owner: item.owner ?? null,
    started_at: readInteger(item.started_at),
  }));
}

/** Every execution of a trade's settlement (every leg, every rerun), oldest first, each with its events in order. */
export async function settlementHistory(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  tradeId: string,
): Promise<{ executions: (SettlementExecution & { events: SettlementEvent[] })[] }> {
  const items = await queryAll(ctx, {
    TableName: ctx.tables.main,
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.trade(tradeId).pk, ':prefix': keys.settlementExecutionsPrefix() },
    ConsistentRead: true,
  });

  const executions = new Map<string, SettlementExecution & { events: SettlementEvent[] }>();
  for (const item of items.filter((i) => i.type === 'settlement_execution')) {
    executions.set(item.execution_id, {
      trade_id: item.trade_id,
      execution_id: item.execution_id,
      // Histories written before legs existed are the trade's only execution.
      execution_name: item.execution_name ?? item.trade_id,
      owner: item.owner ?? null,
      status: item.status,
      started_at: readInteger(item.started_at),
      stopped_at: readOptionalInteger(item.stopped_at),
      error: item.error ?? null,
      events: [],
    });
  }
  // Sort keys order the events within an execution; executions' ids start with their start time.
  for (const item of items.filter((i) => i.type === 'settlement_event')) {
    executions.get(item.execution_id)?.events.push({
      sequence: readInteger(item.sequence),
      type: item.event_type,
      state: item.state ?? null,
      state_type: item.state_type ?? null,
      at: readInteger(item.at),
      outcome: item.outcome ?? null,
      past_deadline: item.past_deadline ?? null,
      error: item.error ?? null,
    });
  }
  return { executions: [...executions.values()] };
}

/** How many states a trade's executions entered in all: the cost measure of a settlement. */
export async function stateTransitionCount(ctx: Pick<AppContext, 'db' | 'tables'>, tradeId: string): Promise<number> {
  const { executions } = await settlementHistory(ctx, tradeId);
  return executions.reduce(
    (sum, execution) => sum + execution.events.filter((event) => event.type === 'StateEntered').length,
    0,
  );
}
