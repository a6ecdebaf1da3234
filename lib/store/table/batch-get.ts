import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { ThrottledError, withRetry } from './retry.js';
import type { AppContext } from '../../context.js';

/** DynamoDB's limit of keys per BatchGetItem. */
const MAX_BATCH_KEYS = 100;

/**
 * The items stored under `keys` in the main table (absent keys are simply missing from the answer, and the
 * order is DynamoDB's), 100 keys per BatchGetItem, the calls sent side by side: an award distribution reads
 * its 1,000 recipients in ten before its first write, which one after another took about half as long again
 * (docs/performance.md, "Award distributions"). The callers read at most 1,000 keys, and the client's socket limit
 * (AWS_MAX_SOCKETS) queues any calls past it. Keys DynamoDB leaves unprocessed (it does so when throttled) are
 * asked for again under the store's retry policy, keeping what earlier rounds returned; when they stay
 * unprocessed, a 503.
 */
export async function batchGetItems(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  keys: readonly Record<string, unknown>[],
  options: { consistent?: boolean; what: string },
): Promise<Record<string, unknown>[]> {
  const table = ctx.tables.main;
  const found: Record<string, unknown>[] = [];
  const batches: Promise<void>[] = [];
  for (let start = 0; start < keys.length; start += MAX_BATCH_KEYS) {
    let pending = keys.slice(start, start + MAX_BATCH_KEYS);
    batches.push(
      withRetry(ctx, { what: options.what }, async () => {
        const out = await ctx.db.send(
          new BatchGetCommand({ RequestItems: { [table]: { Keys: pending, ConsistentRead: options.consistent } } }),
        );
        found.push(...(out.Responses?.[table] ?? []));
        pending = (out.UnprocessedKeys?.[table]?.Keys ?? []) as Record<string, unknown>[];
        if (pending.length > 0) throw new ThrottledError(`${pending.length} key(s) left unprocessed`);
      }),
    );
  }
  // Every call ends before the read does, a failed one too: none goes on retrying after its caller has answered.
  const failed = (await Promise.allSettled(batches)).find((batch) => batch.status === 'rejected');
  if (failed) throw failed.reason;
  return found;
}
