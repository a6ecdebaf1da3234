import { batchGetItems } from './table/batch-get.js';
import {
  combineFilters,
  equalityFilter,
  pageWithCount,
  type ListFilter,
  type ListIndex,
  type PageRequest,
} from './table/paging.js';
import { MOVEMENTS_LIST } from './ledger.js';
import { Money, plain } from '../domain/money.js';
import { accountIdOf, assertBalanced, netChanges, type Movement, type NetChange } from '../domain/ledger.js';
import {
  movementAccountEntryEntity,
  movementEntity,
  movementEntryEntity,
  type StoredMovementItem,
} from './entities/ledger.js';
import { ALL, readCount } from './table/counters.js';
import type { TaggedItem, TransactItem } from './table/transaction-items.js';
import type { AppContext } from '../context.js';

/**
 * Reading movements as lists (`GET /movements`, `GET /accounts/{account_id}/movements`). A movement's
 * record carries its platform's list entry (gsi1 `PLATFORM#<p>#MOVEMENTS`, by time); a movement between
 * two platforms' accounts (a transfer under `submits_platform_transfers_for`) has one more entry item for
 * the other platform; each platform or customer account it changes has an entry of its own (gsi1
 * `ACCOUNT#<id>#MOVEMENTS`). All are written with the movement, in its transaction (`lib/ledger/batch.ts`).
 *
 * The platform list's filters by account, participant and asset are FilterExpressions over the entry's
 * `account_ids`, `participant_codes` and `assets` (under the page read budget); its unfiltered count is the
 * `movements` counter, which each movement's record moves once per platform. An account's own list is one
 * Query of its partition, counted by the account item's `movement_count`.
 */

export interface StoredMovementLeg {
  participant_code: string;
  account_group: string;
  account_label: string;
  asset: string;
  platform_code: string | null;
  amount: Money;
}

export interface StoredMovement {
  movement_id: string;
  movement_type: string;
  reference: string;
  created_at: number;
  legs: StoredMovementLeg[];
}

/** A movement record or second-platform entry as read (parsed by its entity), as the use cases take it. */
function storedMovement(movement: StoredMovementItem): StoredMovement {
  return {
    movement_id: movement.movement_id,
    movement_type: movement.movement_type,
    reference: movement.reference,
    created_at: movement.created_at,
    legs: movement.legs.map((leg) => ({
      participant_code: leg.participant_code,
      account_group: leg.account_group,
      account_label: leg.account_label,
      asset: leg.asset,
      platform_code: leg.platform_code ?? null,
      amount: new Money(leg.amount),
    })),
  };
}

/** An item of a platform's movements list: the record (its first platform's) or a second platform's entry. */
function parseListedMovement(item: Record<string, unknown>): StoredMovement {
  return storedMovement(
    item.type === movementEntryEntity.type ? movementEntryEntity.parse(item) : movementEntity.parse(item),
  );
}

interface MovementListFilters {
  account_id?: string;
  participant_code?: string;
  asset?: string;
  movement_type?: string;
  /** Inclusive bounds on the movement's time, in ms. */
  fromMs?: number;
  toMs?: number;
}

function containsFilter(name: string, attribute: string, value: string | undefined): ListFilter | undefined {
  return value === undefined
    ? undefined
    : {
        expression: `contains(#${name}, :${name})`,
        names: { [`#${name}`]: attribute },
        values: { [`:${name}`]: value },
      };
}

/** A movement as one account's entry holds it: the movement and that account's net change. */
interface StoredAccountMovement {
  movement_id: string;
  movement_type: string;
  reference: string;
  created_at: number;
  account_id: string;
  asset: string;
  change: Money;
}

function toAccountMovement(item: Record<string, unknown>): StoredAccountMovement {
  const entry = movementAccountEntryEntity.parse(item);
  return {
    movement_id: entry.movement_id,
    movement_type: entry.movement_type,
    reference: entry.reference,
    created_at: entry.created_at,
    account_id: entry.account_id,
    asset: entry.asset,
    change: new Money(entry.change),
  };
}

/** A time range of a movements list (the platform's and an account's sort alike: `<created_at>#<id>`). */
function timeRange(filters: { fromMs?: number; toMs?: number }): Pick<ListIndex, 'sortRange'> {
  if (filters.fromMs === undefined && filters.toMs === undefined) return {};
  const sortKey = (created_at: number, movement_id: string) =>
    movementAccountEntryEntity.indexSortKey('gsi1', { account_id: '', created_at, movement_id });
  return {
    sortRange: {
      between: [sortKey(Math.max(0, filters.fromMs ?? 0), ''), sortKey(filters.toMs ?? 999_999_999_999_999, '~')],
    },
  };
}

/**
 * One page of the movements that changed one account, newest first: one Query of the account's own index
 * partition (its entries, written with each movement), so a quiet account on a busy platform gets full
 * pages. `movementCount` is the account's stored count (the account item's `movement_count`, moved in
 * the same transactions as the entries): the count of the unfiltered list, exact at any size; filtered
 * requests are counted within the count budget over the account's own entries.
 */
export async function pageOfAccountMovements(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'config' | 'caches' | 'retry' | 'cursorKey'>,
  account: { accountId: string; movementCount: number },
  filters: Omit<MovementListFilters, 'account_id'>,
  request: PageRequest,
  binding: { list: string; platformCode: string; filters: Record<string, string | number | undefined> },
) {
  const filter = equalityFilter({
    movement_type: filters.movement_type,
    participant_code: filters.participant_code,
    asset: filters.asset,
  });
  const index = movementAccountEntryEntity.listIndex(
    'gsi1',
    { account_id: account.accountId },
    { ...timeRange(filters), descending: true, ...(filter && { filter }) },
  );
  const counter = !filter && index.sortRange === undefined ? async () => account.movementCount : undefined;
  const page = await pageWithCount(ctx, index, request, binding, counter);
  return { ...page, items: page.items.map(toAccountMovement) };
}

/** One page of the movements that touch the platform's (or its customers') accounts, newest first. */
export async function pageOfMovements(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'config' | 'caches' | 'retry' | 'cursorKey'>,
  platformCode: string,
  filters: MovementListFilters,
  request: PageRequest,
  binding: { list: string; filters: Record<string, string | number | undefined> },
) {
  const filter = combineFilters([
    containsFilter('acct', 'account_ids', filters.account_id),
    containsFilter('part', 'participant_codes', filters.participant_code),
    containsFilter('asst', 'assets', filters.asset),
    equalityFilter({ movement_type: filters.movement_type }),
  ]);
  const index = movementEntity.listIndex(
    'gsi1',
    { platform_code: platformCode },
    { ...timeRange(filters), descending: true, ...(filter && { filter }) },
  );
  // The unfiltered list is counted by its counter (exact at any size); any filter within the count budget.
  const unfiltered = !filter && index.sortRange === undefined;
  const counter = unfiltered ? () => readCount(ctx, platformCode, MOVEMENTS_LIST) : undefined;
  const page = await pageWithCount(
    ctx,
    index,
    request,
    { list: binding.list, platformCode, filters: binding.filters },
    counter,
  );
  return { ...page, items: page.items.map(parseListedMovement) };
}

/** The records of these movements, in the order given (one consistent BatchGetItem per 100; a missing one is left out). */
export async function movementsById(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  movementIds: readonly string[],
): Promise<StoredMovement[]> {
  if (movementIds.length === 0) return [];
  const found = await batchGetItems(
    ctx,
    [...new Set(movementIds)].map((movement_id) => movementEntity.key({ movement_id })),
    { consistent: true, what: 'movement records' },
  );
  const byId = new Map(
    found.map((item) => storedMovement(movementEntity.parse(item))).map((movement) => [movement.movement_id, movement]),
  );
  return movementIds.flatMap((id) => byId.get(id) ?? []);
}

/** A platform or customer account: versioned, with a movements list of its own. */
const isVersioned = (change: Pick<NetChange, 'platform_code'>) => change.platform_code !== null;

/**
 * A movement's record and entries as a booking writes them, with the counts the record moves, without the
 * balance updates: for writing a history in bulk (the benchmark's seed, tests of long lists), never to book.
 */
export function movementRecordItems(ctx: Pick<AppContext, 'tables'>, movement: Movement, nowMs: number): TaggedItem[] {
  const platforms = [
    ...new Set(movement.legs.map((leg) => leg.platform_code).filter((code): code is string => code !== null)),
  ];
  return movementRecords(ctx, movement, nowMs).map((item, i) => ({
    item,
    ...(i === 0 && {
      counts: platforms.map((platformCode) => ({ platformCode, list: MOVEMENTS_LIST, bucket: ALL, delta: 1 })),
    }),
  }));
}

/** The movement's immutable record, a second platform's list entry, and an entry per platform or customer account it changes. */
export function movementRecords(ctx: Pick<AppContext, 'tables'>, movement: Movement, nowMs: number): TransactItem[] {
  assertBalanced(movement);
  // The record is the list entry of the first platform whose accounts the movement touches; a second platform
  // (a transfer under a relationship) gets an entry item of its own. What the list filters on is on each.
  const platforms = [
    ...new Set(movement.legs.map((leg) => leg.platform_code).filter((code): code is string => code !== null)),
  ];
  const fields = movementFields(movement, nowMs);
  const absent = { condition: 'attribute_not_exists(pk)' };
  const record: TransactItem = movementEntity.put(
    ctx.tables,
    { ...fields, ...(platforms[0] !== undefined && { platform_code: platforms[0] }) },
    absent,
  );
  const entries: TransactItem[] = platforms
    .slice(1)
    .map((platformCode) => movementEntryEntity.put(ctx.tables, { ...fields, platform_code: platformCode }, absent));
  // Each platform or customer account the movement changes: its movements list (one Query per page, whatever
  // the platform holds). System accounts have none: every platform's bookings touch them.
  const accountEntries: TransactItem[] = netChanges(movement.legs)
    .filter(isVersioned)
    .map((change) =>
      movementAccountEntryEntity.put(
        ctx.tables,
        {
          movement_id: movement.movement_id,
          movement_type: movement.type,
          reference: movement.reference,
          created_at: nowMs,
          account_id: accountIdOf(change.account),
          participant_code: change.account.participant_code,
          asset: change.account.asset,
          platform_code: change.platform_code!,
          change: plain(change.change),
        },
        absent,
      ),
    );
  return [record, ...entries, ...accountEntries];
}

/** What a movement's record and its second platform's entry both carry: the movement, and what its lists filter on. */
function movementFields(movement: Movement, nowMs: number): StoredMovementItem {
  const platformLegs = movement.legs.filter((leg) => leg.platform_code !== null);
  return {
    movement_id: movement.movement_id,
    movement_type: movement.type,
    reference: movement.reference,
    created_at: nowMs,
    legs: movement.legs.map((leg) => ({
      participant_code: leg.account.participant_code,
      account_group: leg.account.account_group,
      account_label: leg.account.account_label,
      asset: leg.account.asset,
      platform_code: leg.platform_code,
      amount: plain(leg.amount),
    })),
    ...(platformLegs.length > 0 && {
      account_ids: [...new Set(platformLegs.map((leg) => accountIdOf(leg.account)))],
      participant_codes: [...new Set(platformLegs.map((leg) => leg.account.participant_code))],
      assets: [...new Set(platformLegs.map((leg) => leg.account.asset))],
    }),
  };
}
