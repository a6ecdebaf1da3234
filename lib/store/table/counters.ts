import { randomInt } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { counterShardEntity } from '../entities/counter.js';
import { withRetry } from './retry.js';
import type { CountChange, TransactItem } from './transaction-items.js';
import type { AppContext } from '../../context.js';

/**
 * Exact list counts. A record's item declares how it moves its lists' counters
 * (`TaggedItem.counts`); `transactWrite` adds the counter updates to the same transaction, so a count can't
 * drift from the records it counts. Each counter is split over COUNTER_SHARDS items in one partition: a write
 * adds to one shard picked at random, a read sums the partition with one Query. Concurrent bookings of one
 * platform then rarely touch the same counter item (DynamoDB cancels a transaction that does).
 */

/** See lib/store/README.md ("Counters") for how this follows from DynamoDB's limits. */
const COUNTER_SHARDS = 8;

/** The counter `bucket` for records whose `field` has `value`, and the one every record of a list is in. */
export const ALL = 'all';
export const bucketOf = (field: string, value: string | null) => `${field}=${value ?? 'null'}`;

/**
 * One update per counter the changes touch, deltas of the same counter summed (a transaction may not name an
 * item twice: an award chunk books 48 trades of one platform), counters left unchanged dropped.
 */
export function counterUpdates(ctx: Pick<AppContext, 'tables'>, changes: readonly CountChange[]): TransactItem[] {
  const net = new Map<string, CountChange>();
  for (const change of changes) {
    const id = JSON.stringify([change.platformCode, change.list, change.bucket]);
    const seen = net.get(id);
    net.set(id, { ...change, delta: (seen?.delta ?? 0) + change.delta });
  }
  return [...net.values()]
    .filter((change) => change.delta !== 0)
    .map((change) => {
      const update = 'ADD #n :delta SET #type = :type';
      const shard = {
        platform_code: change.platformCode,
        list: change.list,
        bucket: change.bucket,
        shard: randomInt(COUNTER_SHARDS),
      };
      const { Update } = counterShardEntity.update(ctx.tables, shard, {
        update,
        names: { '#n': 'n', '#type': 'type' },
        values: { ':delta': change.delta, ':type': counterShardEntity.type },
      });
      return { Update: { ...Update, UpdateExpression: update } };
    });
}

/** A counter's value: its shards summed, read with one Query. */
export async function readCount(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  platformCode: string,
  list: string,
  bucket = ALL,
): Promise<number> {
  const query = counterShardEntity.query(
    ctx.tables,
    'table',
    counterShardEntity.partitionKey({ platform_code: platformCode, list, bucket }),
  );
  const out = await withRetry(ctx, { what: 'list count' }, () =>
    ctx.db.send(
      new QueryCommand({
        ...query,
        ProjectionExpression: '#n',
        ExpressionAttributeNames: { ...query.ExpressionAttributeNames, '#n': 'n' },
      }),
    ),
  );
  return (out.Items ?? []).reduce((sum, item) => sum + (counterShardEntity.parse(item).n ?? 0), 0);
}
