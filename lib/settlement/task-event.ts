import type { SettlementTaskInput } from './workflow-io.js';

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
