import * as z from 'zod/mini';
import { integer } from '../entity/attributes.js';
import { defineEntity } from '../entity/entity.js';

/**
 * The local settlement runner's record of each execution of a trade's settlement workflow, and the events it
 * went through, in the trade's partition (the local counterpart of Step Functions' execution history).
 */

const executionStatus = z.enum(['RUNNING', 'SUCCEEDED', 'FAILED', 'ABORTED', 'TIMED_OUT', 'INTERRUPTED']);

export type ExecutionStatus = z.output<typeof executionStatus>;

/**
 * One run (`execution_id`: its start ms and a random part). gsi2 (sparse) while RUNNING: its end removes it,
 * so a run left RUNNING by a process that died is found without reading every trade's history. Written
 * RUNNING without `stopped_at` and `error`, which its end sets; one recorded before legs has no
 * `execution_name` (it was the trade's only execution, named by the trade id).
 */
export const settlementExecutionEntity = defineEntity({
  type: 'settlement_execution',
  table: 'main',
  schema: z.object({
    trade_id: z.string(),
    execution_id: z.string(),
    /** What Step Functions would name it: the trade id, `<trade_id>-<n>` for leg n of a long settlement. */
    execution_name: z.optional(z.string()),
    /** The runner that runs it (host, pid, runner id), so a run whose process died can be told from a live one. */
    owner: z.optional(z.nullable(z.string())),
    status: executionStatus,
    started_at: integer,
    stopped_at: z.optional(z.nullable(integer)),
    error: z.optional(z.nullable(z.string())),
  }),
  key: { pk: 'TRADE#{trade_id}', sk: 'EXECUTION#{execution_id}' },
  indexes: { gsi2: { pk: 'EXECUTIONS#RUNNING', sk: '{started_at:time}#{trade_id}#{execution_id}', sparse: true } },
});

/**
 * One event of an execution, as the workflow engine reported it; the sort key orders them within it. The
 * event's own type is `event_type` (`type` names the entity, as everywhere in the table).
 */
export const settlementEventEntity = defineEntity({
  type: 'settlement_event',
  table: 'main',
  schema: z.object({
    trade_id: z.string(),
    execution_id: z.string(),
    sequence: integer,
    /** StateEntered, StateExited, StateFailed, StateRetried, ExecutionStarted, ExecutionSucceeded, ... */
    event_type: z.string(),
    state: z.optional(z.nullable(z.string())),
    state_type: z.optional(z.nullable(z.string())),
    at: integer,
    /** Task exits: the task's `outcome` (settled, outstanding, defaulted, terminated). */
    outcome: z.optional(z.nullable(z.string())),
    past_deadline: z.optional(z.nullable(z.boolean())),
    error: z.optional(z.nullable(z.string())),
  }),
  key: { pk: 'TRADE#{trade_id}', sk: 'EXECUTION#{execution_id}#EVENT#{sequence:6}' },
});
