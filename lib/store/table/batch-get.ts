import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { ThrottledError, withRetry } from './retry.js';
import type { AppContext } from '../../context.js';

/** DynamoDB's limit of keys per BatchGetItem. */
const MAX_BATCH_KEYS = 100;

/**
 * The items stored under `keys` in the main table (absent keys are simply missing from the answer), 100 keys
 * per BatchGetItem. Keys DynamoDB leaves unprocessed (it does so when throttled) are asked for again under the
 * store's retry policy, keeping what earlier rounds returned; when they stay unprocessed, a 503.
 */
export async function batchGetItems(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  keys: readonly Record<string, unknown>[],
  options: { consistent?: boolean; what: string },
): Promise<Record<string, any>[]> {
  const table = ctx.tables.main;
  const found: Record<string, any>[] = [];
  for (let start = 0; start < keys.length; start += MAX_BATCH_KEYS) {
    let pending = keys.slice(start, start + MAX_BATCH_KEYS);
    await withRetry(ctx, { what: options.what }, async () => {
      const out = await ctx.db.send(
        new BatchGetCommand({ RequestItems: { [table]: { Keys: pending, ConsistentRead: options.consistent } } }),
      );
      found.push(...(out.Responses?.[table] ?? []));
      pending = (out.UnprocessedKeys?.[table]?.Keys ?? []) as Record<string, unknown>[];
      if (pending.length > 0) throw new ThrottledError(`${pending.length} key(s) left unprocessed`);
    });
  }
  return found;
}
