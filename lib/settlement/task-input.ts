import * as z from 'zod/mini';
import type { SettlementTaskInput } from '../domain/workflow-io.js';
import { formatIssues, messageId } from '../domain/validation.js';

/**
 * What each settlement task Lambda receives: what the workflow's `Parameters` pass (see
 * `infra/settlement-workflow.ts`), parsed at the edge of the handler. The trade id always (at most 100
 * characters: a longer one can't be ours, and reading it would fail on DynamoDB's key size); the attempt task
 * also the leg's end, the continue task the leg's number. Anything else is a wiring mistake: the task throws,
 * so Step Functions retries it and then fails the execution where ops can see it.
 */
const NOT_AN_OBJECT = 'must be an object';
const POSITIVE_INTEGER = 'must be a positive integer';

const tradeTaskInput = z.object({ trade_id: messageId() }, NOT_AN_OBJECT);

/**
 * The leg's end (ISO 8601). Optional, and ignored rather than refused when it isn't a time: the attempt then
 * decides as if the leg had no end (executions started before legs existed pass none).
 */
const legEndsAt = z.catch(
  z.optional(z.string().check(z.refine((value) => !Number.isNaN(Date.parse(value))))),
  undefined,
);

export const SETTLEMENT_TASK_INPUTS = {
  activate: tradeTaskInput,
  attempt: z.extend(tradeTaskInput, { leg_ends_at: legEndsAt }),
  default: tradeTaskInput,
  continue: z.extend(tradeTaskInput, { leg: z.int(POSITIVE_INTEGER).check(z.positive(POSITIVE_INTEGER)) }),
} satisfies Record<string, z.ZodMiniType<SettlementTaskInput>>;

type SettlementTask = keyof typeof SETTLEMENT_TASK_INPUTS;
type TaskInput<Task extends SettlementTask> = z.output<(typeof SETTLEMENT_TASK_INPUTS)[Task]>;

/** `event` as task `task`'s input, or an error naming the fields expected, what came and what is wrong with it. */
export function settlementTaskInput<Task extends SettlementTask>(task: Task, event: unknown): TaskInput<Task> {
  const schema = SETTLEMENT_TASK_INPUTS[task];
  const parsed = schema.safeParse(event);
  // The output of `task`'s own schema: TypeScript does not follow the key through the union of schemas.
  if (parsed.success) return parsed.data as TaskInput<Task>;
  const expected = Object.entries(schema.shape)
    .map(([field, fieldSchema]: [string, z.ZodMiniType]) =>
      fieldSchema._zod.optin === 'optional' ? `${field}?` : field,
    )
    .join(', ');
  const problems = formatIssues(parsed.error.issues, 'input').join('; ');
  throw new Error(`settlement task ${task}: expected { ${expected} }, got ${JSON.stringify(event)} (${problems})`);
}
