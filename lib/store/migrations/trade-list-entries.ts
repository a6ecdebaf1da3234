import { isDeepStrictEqual } from 'node:util';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { tradeEntity, tradeVisibilityEntity } from '../entities/trade.js';
import type { StoredItem } from '../entity/entity.js';
import { writtenUnlessConditionFailed } from '../table/conditional.js';
import { transactWrite } from '../table/transactions.js';
import { getTrade, tradeListEntryItem } from '../trades.js';
import { TRADE_LIST_ENTRIES } from './names.js';
import type { MigrationProgress } from './records.js';
import { type ItemOutcome, migrateEach, type Migration, scanUndone } from './run.js';
import type { AppContext } from '../../context.js';

/**
 * 0003: the list entries of a party's platform written before entries held the trade (no `reported_by`) get the
 * trade (lib/store/entities/trade.ts, `tradeVisibilityEntity`), so GET /trades reads no trade apart for them.
 *
 * Each entry: the trade read consistently, then one transaction writing the entry as a report writes it now
 * (`tradeListEntryItem`: the trade whole, the reporter's platform as `reported_by`) on the condition that the
 * entry still has no `reported_by`, with a check that the trade's `last_update` is still the one read; then the
 * trade read again. A change of the trade sets its fields on the entry in its own transaction, so one committed
 * between the read and the write would be undone by the write: a change in another millisecond fails the check,
 * and one in the read's own millisecond (which the check can't tell apart) shows in the second read. Either way
 * the entry is written again from the trade as it is now, until a read after the write finds the trade as
 * written. An entry filled in by another run fails the condition and is counted as already done. So a page done
 * twice, two runs at once or a settlement step in between change nothing twice and never leave the entry behind
 * the trade.
 *
 * The whole table: a Scan of 100 items a page, filtered to entries without `reported_by`. One platform: the
 * same Scan, filtered to the entries listing that platform's trades.
 */

/** Writes of an entry whose trade changed meanwhile, before the entry is left for a later run. */
const ATTEMPTS = 5;

type Ctx = Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>;

async function fillEntry(ctx: Ctx, entry: StoredItem): Promise<ItemOutcome> {
  const { trade_id: tradeId, platform_code: platformCode } = tradeVisibilityEntity.parse(entry);
  // Until this run has written the entry, it must still lack `reported_by` (another run may fill it first).
  let written = false;
  let trade = await getTrade(ctx, tradeId, { consistent: true });
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    // An entry without its trade lists nothing (GET /trades skips it): left as it is.
    if (!trade) return 'skipped';
    try {
      await transactWrite(ctx, [
        {
          // The entry as a report writes it now, in place of the old one.
          item: tradeListEntryItem(
            ctx,
            trade,
            platformCode,
            written ? 'attribute_exists(pk)' : 'attribute_exists(pk) AND attribute_not_exists(reported_by)',
          ),
          onConditionFailed: () => new EntryFilledError(),
        },
        {
          item: tradeEntity.check(
            ctx.tables,
            { trade_id: tradeId },
            { condition: 'last_update = :read', values: { ':read': trade.last_update } },
          ),
          onConditionFailed: () => new TradeMovedError(),
        },
      ]);
      written = true;
    } catch (error) {
      // Written since by another run; or, after this run's write, gone (nothing left to fill).
      if (error instanceof EntryFilledError) return written ? 'migrated' : 'already';
      if (!(error instanceof TradeMovedError)) throw error;
    }
    // Moved before the write (the check failed), or perhaps in the read's own millisecond: the trade as it is now
    // is what the next write starts from.
    const now = await getTrade(ctx, tradeId, { consistent: true });
    if (written && isDeepStrictEqual(now, trade)) return 'migrated';
    trade = now;
  }
  if (written) {
    // Written, perhaps behind its trade: without `reported_by` GET /trades reads the trade itself, and a later
    // run finds the entry again (unless it is gone).
    await writtenUnlessConditionFailed(
      ctx.db.send(
        new UpdateCommand(
          tradeVisibilityEntity.update(
            ctx.tables,
            { trade_id: tradeId, platform_code: platformCode },
            { update: 'REMOVE reported_by', condition: 'attribute_exists(pk)' },
          ).Update,
        ),
      ),
    );
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

export const tradeListEntries: Migration = {
  name: TRADE_LIST_ENTRIES,
  description:
    "the list entries of a party's platform written before entries held the trade: the trade's fields set on each (the reporter's platform as reported_by)",
  async page(ctx, { platformCode }, position, progress: MigrationProgress) {
    const out = await scanUndone(
      ctx,
      { types: [tradeVisibilityEntity.type], missing: 'reported_by', platformCode },
      position,
    );
    await migrateEach(out.Items ?? [], progress, (item) => fillEntry(ctx, item));
    return out.LastEvaluatedKey;
  },
};
