import type { SettlementTaskInput } from '../domain/workflow-io.js';

/**
 * The task Lambdas' event is what the workflow's `Parameters` pass: `{ trade_id }`. Anything else is a
 * wiring mistake; failing makes Step Functions retry and then fail the execution where ops can see it.
 */
export function tradeIdOf(event: unknown): string {
  const tradeId = (event as Partial<SettlementTaskInput> | null)?.trade_id;
  if (typeof tradeId !== 'string' || tradeId.length === 0 || tradeId.length > 100) {
    throw new Error(`settlement task: expected { trade_id }, got ${JSON.stringify(event)}`);
  }
  return tradeId;
}

/** The continue task's leg number (a positive integer), as the workflow passes it. */
export function legOf(event: unknown): number {
  const leg = (event as Partial<SettlementTaskInput> | null)?.leg;
  if (typeof leg !== 'number' || !Number.isInteger(leg) || leg < 1)
    throw new Error(`settlement task: expected { leg }, got ${JSON.stringify(event)}`);
  return leg;
}

/** The attempt task's leg end (ISO 8601), when the workflow passes one. */
export function legEndsAtOf(event: unknown): string | undefined {
  const endsAt = (event as Partial<SettlementTaskInput> | null)?.leg_ends_at;
  return typeof endsAt === 'string' && !Number.isNaN(Date.parse(endsAt)) ? endsAt : undefined;
}
