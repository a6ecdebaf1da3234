import { GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { tradeEntity, tradeVisibilityEntity, type StoredTrade } from '../entities/trade.js';
import type { StoredItem } from '../entity/entity.js';
import { transactWrite } from '../table/transactions.js';
import { TRADE_LIST_ENTRIES } from './names.js';
import type { MigrationProgress } from './records.js';
import { migrateEach, type Migration } from './run.js';
import type { AppContext } from '../../context.js';

/**
 * 0003: the list entries of a party's platform written before entries held the trade (no `reported_by`) get the
 * trade (lib/store/entities/trade.ts, `tradeVisibilityEntity`), so GET /trades reads no trade apart for them.
 *
 * Each entry: the trade read consistently, then one transaction setting every field of it on the entry (the
 * reporter's platform as `reported_by`) on the condition that the entry still has no `reported_by`, with a
 * check that the trade's `last_update` is still the one read. A change of the trade in between (which sets its
 * fields on the entry in its own transaction) fails the check, and the trade is read again; an entry filled in
 * by another run fails the condition and is counted as already done. So a page done twice, two runs at once or
 * a settlement step in between change nothing twice and never leave the entry behind the trade.
 *
 * The whole table: a Scan of 100 items a page, filtered to entries without `reported_by`. One platform: the
 * same Scan, filtered to the entries listing that platform's trades.
 */

/** Items a page reads (evaluated, before the filter): bounds a page's memory and time. */
const PAGE_ITEMS = 100;
/** Reads of a trade that changed between its read and the entry's write, before the entry is left for a later run. */
const ATTEMPTS = 5;

type Ctx = Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>;
type Result = 'migrated' | 'already' | 'skipped';

/** The fields set on an entry: the trade's own, but `platform_code` (the entry's names the listing platform). */
function entryFields({ platform_code, ...fields }: StoredTrade): Record<string, unknown> {
  return { ...fields, reported_by: platform_code };
}

async function fillEntry(ctx: Ctx, entry: StoredItem): Promise<Result> {
  const { trade_id: tradeId, platform_code: platformCode } = tradeVisibilityEntity.parse(entry);
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const out = await ctx.db.send(
      new GetCommand({ ...tradeEntity.get(ctx.tables, { trade_id: tradeId }), ConsistentRead: true }),
    );
    // An entry without its trade lists nothing (GET /trades skips it): left as it is.
    if (!out.Item) return 'skipped';
    const trade = tradeEntity.parse(out.Item);
    const fields = Object.entries(entryFields(trade));
    try {
      await transactWrite(ctx, [
        {
          item: tradeVisibilityEntity.update(
            ctx.tables,
            { trade_id: tradeId, platform_code: platformCode },
            {
              update: `SET ${fields.map((_, i) => `#f${i} = :f${i}`).join(', ')}`,
              condition: 'attribute_exists(pk) AND attribute_not_exists(reported_by)',
              names: Object.fromEntries(fields.map(([name], i) => [`#f${i}`, name])),
              values: Object.fromEntries(fields.map(([, value], i) => [`:f${i}`, value])),
            },
          ),
          onConditionFailed: () => new EntryFilledError(),
        },
        {
          item: tradeEntity.check(
            ctx.tables,
            { trade_id: tradeId },
            {
              condition: 'last_update = :read',
              values: { ':read': trade.last_update },
            },
          ),
          onConditionFailed: () => new TradeMovedError(),
        },
      ]);
      return 'migrated';
    } catch (error) {
      if (error instanceof EntryFilledError) return 'already';
      if (error instanceof TradeMovedError || error instanceof TransactionCanceledException) continue;
      throw error;
    }
  }
  ctx.logger.warn('trade list entry left for a later run: its trade kept changing', { trade_id: tradeId });
  return 'skipped';
}

class EntryFilledError extends Error {
  override readonly name = 'EntryFilledError';
}
class TradeMovedError extends Error {
  override readonly name = 'TradeMovedError';
}

function readPage(ctx: Ctx, platformCode: string | undefined, position: Record<string, unknown> | undefined) {
  return ctx.db.send(
    new ScanCommand({
      TableName: ctx.tables.main,
      Limit: PAGE_ITEMS,
      FilterExpression: [
        '#type = :type',
        'attribute_not_exists(reported_by)',
        ...(platformCode === undefined ? [] : ['platform_code = :platform']),
      ].join(' AND '),
      ExpressionAttributeNames: { '#type': 'type' },
      ExpressionAttributeValues: {
        ':type': tradeVisibilityEntity.type,
        ...(platformCode !== undefined && { ':platform': platformCode }),
      },
      ExclusiveStartKey: position,
    }),
  );
}

export const tradeListEntries: Migration = {
  name: TRADE_LIST_ENTRIES,
  description:
    "the list entries of a party's platform written before entries held the trade: the trade's fields set on each (the reporter's platform as reported_by)",
  async page(ctx, { platformCode }, position, progress: MigrationProgress) {
    const out = await readPage(ctx, platformCode, position);
    const items = out.Items ?? [];
    progress.read += items.length;
    await migrateEach(items, async (item) => {
      const result = await fillEntry(ctx, item);
      progress[result] += 1;
      if (result === 'migrated') progress.written += 1;
    });
    return out.LastEvaluatedKey;
  },
};
