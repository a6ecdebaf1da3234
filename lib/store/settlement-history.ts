import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { queryAll } from './table/query.js';
import type { AppContext } from '../context.js';
import { writtenUnlessConditionFailed } from './table/conditional.js';
import {
  settlementEventEntity,
  settlementExecutionEntity,
  type ExecutionStatus,
} from './entities/settlement-execution.js';

/**
 * The local settlement runner's record of each execution, kept in DynamoDB beside the trade so another
 * process (the ops CLI, a benchmark) can read it: the local counterpart of Step Functions' execution history.
 * On AWS the history lives in Step Functions and nothing is written here.
 */

export type { ExecutionStatus };

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
    new PutCommand(
      settlementExecutionEntity.put(ctx.tables, {
        trade_id: tradeId,
        execution_id: executionId,
        execution_name: executionName,
        owner,
        status: 'RUNNING',
        started_at: startedAtMs,
      }).Put,
    ),
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
  const running = settlementExecutionEntity.indexRemoval('gsi2');
  await ctx.db.send(
    new UpdateCommand(
      settlementExecutionEntity.update(
        ctx.tables,
        { trade_id: tradeId, execution_id: executionId },
        {
          update: `SET #status = :status, stopped_at = :at, #error = :error REMOVE ${running.expression}`,
          names: { '#status': 'status', '#error': 'error', ...running.names },
          values: { ':status': status, ':at': stoppedAtMs, ':error': error ?? null },
        },
      ).Update,
    ),
  );
}

export async function recordExecutionEvent(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  tradeId: string,
  executionId: string,
  event: SettlementEvent,
): Promise<void> {
  const { type, ...fields } = event;
  await ctx.db.send(
    new PutCommand(
      settlementEventEntity.put(ctx.tables, {
        ...fields,
        // The item's `type` names the entity, as everywhere in the table; the event's own type goes beside it.
        event_type: type,
        trade_id: tradeId,
        execution_id: executionId,
      }).Put,
    ),
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
  const running = settlementExecutionEntity.indexRemoval('gsi2');
  return writtenUnlessConditionFailed(
    ctx.db.send(
      new UpdateCommand(
        settlementExecutionEntity.update(
          ctx.tables,
          { trade_id: tradeId, execution_id: executionId },
          {
            update: `SET #status = :status, stopped_at = :at, #error = :error REMOVE ${running.expression}`,
            condition: '#status = :running',
            names: { '#status': 'status', '#error': 'error', ...running.names },
            values: { ':status': status, ':running': 'RUNNING', ':at': nowMs, ':error': error },
          },
        ).Update,
      ),
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
  const items = await queryAll(
    ctx,
    settlementExecutionEntity.query(ctx.tables, 'gsi2', settlementExecutionEntity.indexPartition('gsi2', {})),
  );
  return items.map((item) => {
    const execution = settlementExecutionEntity.parse(item);
    return {
      trade_id: execution.trade_id,
      execution_id: execution.execution_id,
      owner: execution.owner ?? null,
      started_at: execution.started_at,
    };
  });
}

/** Every execution of a trade's settlement (every leg, every rerun), oldest first, each with its events in order. */
export async function settlementHistory(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  tradeId: string,
): Promise<{ executions: (SettlementExecution & { events: SettlementEvent[] })[] }> {
  const items = await queryAll(ctx, {
    ...settlementExecutionEntity.query(
      ctx.tables,
      'table',
      settlementExecutionEntity.partitionKey({ trade_id: tradeId }),
      { beginsWith: settlementExecutionEntity.sortKeyPrefix({}) },
    ),
    ConsistentRead: true,
  });

  const executions = new Map<string, SettlementExecution & { events: SettlementEvent[] }>();
  for (const item of items.filter((i) => i.type === settlementExecutionEntity.type)) {
    const execution = settlementExecutionEntity.parse(item);
    executions.set(execution.execution_id, {
      trade_id: execution.trade_id,
      execution_id: execution.execution_id,
      // Histories written before legs existed are the trade's only execution.
      execution_name: execution.execution_name ?? execution.trade_id,
      owner: execution.owner ?? null,
      status: execution.status,
      started_at: execution.started_at,
      stopped_at: execution.stopped_at ?? null,
      error: execution.error ?? null,
      events: [],
    });
  }
  // Sort keys order the events within an execution; executions' ids start with their start time.
  for (const item of items.filter((i) => i.type === settlementEventEntity.type)) {
    const event = settlementEventEntity.parse(item);
    executions.get(event.execution_id)?.events.push({
      sequence: event.sequence,
      type: event.event_type,
      state: event.state ?? null,
      state_type: event.state_type ?? null,
      at: event.at,
      outcome: event.outcome ?? null,
      past_deadline: event.past_deadline ?? null,
      error: event.error ?? null,
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
