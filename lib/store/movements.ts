import { batchGetItems } from './table/batch-get.js';
import {
  combineFilters,
  equalityFilter,
  pageWithCount,
  type ListFilter,
  type ListIndex,
  type PageRequest,
} from './table/paging.js';
import { keys } from './keys.js';
import { readCount } from './table/counters.js';
import { MOVEMENTS_LIST } from './ledger.js';
import { readInteger, readMoney } from './table/numbers.js';
import type { Money } from '../domain/money.js';
import type { AppContext } from '../context.js';

/**
 * Reading movements as lists (`GET /movements`, `GET /accounts/{account_id}/movements`). A movement's
 * record carries its platform's list entry (gsi1 `PLATFORM#<p>#MOVEMENTS`, by time); a movement between
 * two platforms' accounts (a transfer under `submits_platform_transfers_for`) has one more entry item for
 * the other platform; each platform or customer account it changes has an entry of its own (gsi1
 * `ACCOUNT#<id>#MOVEMENTS`). All are written with the movement, in its transaction (`lib/store/booking/batch.ts`).
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

function toMovement(item: Record<string, any>): StoredMovement {
  return {
    movement_id: item.movement_id,
    movement_type: item.movement_type,
    reference: item.reference,
    created_at: readInteger(item.created_at),
    legs: (item.legs as Record<string, any>[]).map((leg) => ({
      participant_code: leg.participant_code,
      account_group: leg.account_group,
      account_label: leg.account_label,
      asset: leg.asset,
      platform_code: leg.platform_code ?? null,
      amount: readMoney(leg.amount),
    })),
  };
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

function toAccountMovement(item: Record<string, any>): StoredAccountMovement {
  return {
    movement_id: item.movement_id,
    movement_type: item.movement_type,
    reference: item.reference,
    created_at: readInteger(item.created_at),
    account_id: item.account_id,
    asset: item.asset,
    change: readMoney(item.change),
  };
}

function timeRange(filters: { fromMs?: number; toMs?: number }): Pick<ListIndex, 'sortRange'> {
  if (filters.fromMs === undefined && filters.toMs === undefined) return {};
  return {
    sortRange: {
      between: [
        keys.movementSortKey(Math.max(0, filters.fromMs ?? 0), ''),
        keys.movementSortKey(filters.toMs ?? 999_999_999_999_999, '~'),
      ],
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
  const index: ListIndex = {
    indexName: 'gsi1',
    partition: { attribute: 'gsi1pk', value: keys.movementsOfAccount(account.accountId) },
    sortAttribute: 'gsi1sk',
    ...timeRange(filters),
    descending: true,
    ...(filter && { filter }),
  };
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
  const index: ListIndex = {
    indexName: 'gsi1',
    partition: { attribute: 'gsi1pk', value: keys.movementsOfPlatform(platformCode) },
    sortAttribute: 'gsi1sk',
    ...timeRange(filters),
    descending: true,
    ...(filter && { filter }),
  };
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
  return { ...page, items: page.items.map(toMovement) };
}

/** The records of these movements, in the order given (one consistent BatchGetItem per 100; a missing one is left out). */
export async function movementsById(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  movementIds: readonly string[],
): Promise<StoredMovement[]> {
  if (movementIds.length === 0) return [];
  const found = await batchGetItems(
    ctx,
    [...new Set(movementIds)].map((id) => keys.movement(id)),
    { consistent: true, what: 'movement records' },
  );
  const byId = new Map(found.map((item) => [item.movement_id as string, toMovement(item)]));
  return movementIds.flatMap((id) => byId.get(id) ?? []);
}
