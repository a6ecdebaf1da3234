import { QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { accountIdOf, netChanges, type AccountRef, type Movement } from '../../domain/ledger.js';
import { ALL } from '../table/counters.js';
import { MOVEMENTS_LIST, movementOfRecord } from '../ledger.js';
import { accountEntity, movementAccountEntryEntity, movementEntity, movementEntryEntity } from '../entities/ledger.js';
import { transactWrite } from '../table/transactions.js';
import { MAX_TRANSACTION_ITEMS, type CountChange, type TaggedItem } from '../table/transaction-items.js';
import { movementRecordItems } from '../movements.js';
import { MOVEMENT_ACCOUNT_ENTRIES } from './names.js';
import type { MigrationProgress } from './records.js';
import { migrateEach, type Migration, PAGE_ITEMS } from './run.js';
import type { AppContext } from '../../context.js';

/**
 * 0001: per-account movement entries for movements booked before them (lib/store/README.md, "Existing
 * deployments"). For each movement record without its account entries it writes, in one transaction, the
 * entries exactly as a booking writes them (`movementRecordItems`, each `attribute_not_exists`), `ADD
 * movement_count 1` on each account an entry is written for (so a booking's own increment in between is
 * never lost: both add), and +1 on each platform's `movements`/`all` counter (those movements predate it too).
 * A movement whose entries exist (booked since the change, or migrated already) is left alone; an entry
 * found written by a concurrent run cancels the transaction, and the movement is looked at again.
 *
 * The whole table: a Scan of 100 items a page, filtered to movement records. One platform: a Query of its
 * movements list (`PLATFORM#<p>#MOVEMENTS`, records and second-platform entries alike).
 */

/** Entries per transaction: each with its account's update, plus the counters (a movement touches at most two platforms). */
const ENTRIES_PER_TRANSACTION = Math.floor((MAX_TRANSACTION_ITEMS - 2) / 2);
const ATTEMPTS = 3;

class EntryWrittenError extends Error {
  override readonly name = 'EntryWrittenError';
}
class AccountMissingError extends Error {
  override readonly name = 'AccountMissingError';
}

async function existingEntries(ctx: Pick<AppContext, 'db' | 'tables'>, movementId: string): Promise<Set<string>> {
  const found = new Set<string>();
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const out = await ctx.db.send(
      new QueryCommand({
        ...movementAccountEntryEntity.query(
          ctx.tables,
          'table',
          movementAccountEntryEntity.partitionKey({ movement_id: movementId }),
          { beginsWith: movementAccountEntryEntity.sortKeyPrefix({}) },
        ),
        ProjectionExpression: 'sk',
        ConsistentRead: true,
        ExclusiveStartKey,
      }),
    );
    for (const item of out.Items ?? []) found.add(String(item.sk));
    ExclusiveStartKey = out.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return found;
}

type Result = 'migrated' | 'already' | 'skipped';

/** Writes the entries a movement lacks; returns what it did and how many entries it wrote. */
async function migrateMovement(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  item: Readonly<Record<string, unknown>>,
): Promise<{ result: Result; written: number }> {
  // The record, or a second platform's entry: both carry the movement (the entry's schema is the record's).
  const record = item.type === movementEntryEntity.type ? movementEntryEntity.parse(item) : movementEntity.parse(item);
  const movement = movementOfRecord(record);
  const createdAtMs = record.created_at;
  const accounts = new Map<string, AccountRef>(
    netChanges(movement.legs).map((change) => [accountIdOf(change.account), change.account]),
  );
  const platforms = [
    ...new Set(movement.legs.map((leg) => leg.platform_code).filter((code): code is string => code !== null)),
  ];
  const wanted = accountEntriesOf(ctx, movement, createdAtMs);
  if (!wanted) return { result: 'skipped', written: 0 };
  let written = 0;
  for (let attempt = 1; ; attempt++) {
    const existing = await existingEntries(ctx, movement.movement_id);
    const missing = wanted.filter((tagged) => !existing.has(tagged.item.Put!.Item!.sk as string));
    if (missing.length === 0) return { result: written > 0 ? 'migrated' : 'already', written };
    // A movement without any entry predates the movements counter too: it counts once, with its first entries.
    const counts =
      existing.size === 0
        ? platforms.map((platformCode) => ({ platformCode, list: MOVEMENTS_LIST, bucket: ALL, delta: 1 }))
        : [];
    try {
      for (let start = 0; start < missing.length; start += ENTRIES_PER_TRANSACTION) {
        const group = missing.slice(start, start + ENTRIES_PER_TRANSACTION);
        const items = group.flatMap((entry, i) =>
          entryWithCount(ctx, entry, accounts, start === 0 && i === 0 && counts.length > 0 ? counts : undefined),
        );
        await transactWrite(ctx, items);
        written += group.length;
      }
      return { result: 'migrated', written };
    } catch (error) {
      if (error instanceof AccountMissingError) {
        ctx.logger.warn('migration: a movement names an account that does not exist; left alone', {
          migration: MOVEMENT_ACCOUNT_ENTRIES,
          movement_id: movement.movement_id,
        });
        return { result: written > 0 ? 'migrated' : 'skipped', written };
      }
      // Another run wrote an entry first: look again at what exists.
      if (!(error instanceof EntryWrittenError) || attempt >= ATTEMPTS) throw error;
    }
  }
}

/**
 * The account entries a booking of the movement writes, or undefined for a record that breaks the ledger's
 * rules (legs not balanced): that is the ledger check's to report, not ours to extend.
 */
function accountEntriesOf(
  ctx: Pick<AppContext, 'tables' | 'logger'>,
  movement: Movement,
  createdAtMs: number,
): TaggedItem[] | undefined {
  try {
    return movementRecordItems(ctx, movement, createdAtMs).filter(
      (tagged) => tagged.item.Put?.Item?.type === movementAccountEntryEntity.type,
    );
  } catch (error) {
    ctx.logger.warn('migration: a movement record is not a valid movement; left alone', {
      migration: MOVEMENT_ACCOUNT_ENTRIES,
      movement_id: movement.movement_id,
      error: String(error),
    });
    return undefined;
  }
}

/**
 * An entry and `ADD movement_count 1` on its account (an add, so a booking's own increment in between is
 * never lost); `counts` on the movement's first entry written.
 */
function entryWithCount(
  ctx: Pick<AppContext, 'tables'>,
  entry: TaggedItem,
  accounts: ReadonlyMap<string, AccountRef>,
  counts: CountChange[] | undefined,
): TaggedItem[] {
  const account = accounts.get(entry.item.Put!.Item!.account_id as string)!;
  return [
    {
      item: entry.item,
      onConditionFailed: () => new EntryWrittenError(),
      ...(counts && { counts }),
    },
    {
      item: {
        Update: {
          ...accountEntity.update(ctx.tables, account, {
            update: 'ADD movement_count :one',
            condition: 'attribute_exists(pk)',
            values: { ':one': 1 },
          }).Update,
          UpdateExpression: 'ADD movement_count :one',
        },
      },
      onConditionFailed: () => new AccountMissingError(),
    },
  ];
}

async function readPage(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  platformCode: string | undefined,
  position: Record<string, unknown> | undefined,
) {
  if (platformCode === undefined) {
    return ctx.db.send(
      new ScanCommand({
        TableName: ctx.tables.main,
        Limit: PAGE_ITEMS,
        FilterExpression: 'sk = :record AND begins_with(pk, :movement)',
        ExpressionAttributeValues: { ':record': 'MOVEMENT', ':movement': 'MOVEMENT#' },
        ExclusiveStartKey: position,
      }),
    );
  }
  return ctx.db.send(
    new QueryCommand({
      ...movementEntity.query(
        ctx.tables,
        'gsi1',
        movementEntity.indexPartition('gsi1', { platform_code: platformCode }),
      ),
      Limit: PAGE_ITEMS,
      ExclusiveStartKey: position,
    }),
  );
}

export const movementAccountEntries: Migration = {
  name: MOVEMENT_ACCOUNT_ENTRIES,
  description:
    "per-account movement entries (and each account's movement_count, each platform's movements counter) for movements booked before them; then GET /movements?account_id= reads the account's own list",
  async page(ctx, { platformCode }, position, progress: MigrationProgress) {
    const out = await readPage(ctx, platformCode, position);
    const items = (out.Items ?? []).filter(
      (item) => item.type === movementEntity.type || item.type === movementEntryEntity.type,
    );
    await migrateEach(items, progress, (item) => migrateMovement(ctx, item));
    return out.LastEvaluatedKey;
  },
};
