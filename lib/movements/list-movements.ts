import { ACCOUNT_ID_PATTERN, findAccountOfPlatform } from '../accounts/get-account.js';
import { findAsset } from '../domain/assets.js';
import { accountIdOf, type AccountRef } from '../domain/ledger.js';
import { formatAmount, Money } from '../domain/money.js';
import { listEnvelope } from '../domain/list-envelope.js';
import { getAccountById } from '../store/ledger.js';
// Not the migrations' index: a read needs only the record, not the migration's code.
import { MOVEMENT_ACCOUNT_ENTRIES } from '../store/migrations/names.js';
import { isMigrationApplied } from '../store/migrations/records.js';
import { movementsById, pageOfAccountMovements, pageOfMovements, type StoredMovement } from '../store/movements.js';
import type { AppContext } from '../context.js';

interface MovementTimeBounds {
  /** The reference API's bracket operators on the movement time (ms)... */
  'movement_timestamp[gt]'?: number;
  'movement_timestamp[gte]'?: number;
  'movement_timestamp[lt]'?: number;
  'movement_timestamp[lte]'?: number;
}

interface MovementFilters extends MovementTimeBounds {
  account_id?: string;
  participant_code?: string;
  asset?: string;
  movement_type?: string;
  page: number;
  page_size: number;
  cursor?: string;
}

/** Every bound folded into one inclusive range. */
function inclusiveRange(bounds: MovementTimeBounds): { fromMs?: number; toMs?: number } {
  const gt = bounds['movement_timestamp[gt]'];
  const lt = bounds['movement_timestamp[lt]'];
  const lows = [bounds['movement_timestamp[gte]'], gt === undefined ? undefined : gt + 1].filter(
    (v): v is number => v !== undefined,
  );
  const highs = [bounds['movement_timestamp[lte]'], lt === undefined ? undefined : lt - 1].filter(
    (v): v is number => v !== undefined,
  );
  return {
    ...(lows.length > 0 && { fromMs: Math.max(...lows) }),
    ...(highs.length > 0 && { toMs: Math.min(...highs) }),
  };
}

interface AccountChange {
  account: AccountRef;
  change: Money;
}

/** The movement's net change per account of `platformCode` (system and other platforms' accounts left out). */
function changesOf(movement: StoredMovement, platformCode: string): AccountChange[] {
  const byAccount = new Map<string, AccountChange>();
  for (const leg of movement.legs) {
    if (leg.platform_code !== platformCode) continue;
    const account: AccountRef = {
      participant_code: leg.participant_code,
      account_group: leg.account_group,
      account_label: leg.account_label,
      asset: leg.asset,
    };
    const id = accountIdOf(account);
    const entry = byAccount.get(id);
    if (entry) entry.change = entry.change.plus(leg.amount);
    else byAccount.set(id, { account, change: leg.amount });
  }
  return [...byAccount.values()];
}

function changeView({ account, change }: AccountChange) {
  return {
    account_id: accountIdOf(account),
    account_owner: account.participant_code,
    account_group: account.account_group,
    account_label: account.account_label,
    asset: account.asset,
    // Signed: negative debits the account.
    change: formatAmount(change, findAsset(account.asset)!),
  };
}

/**
 * A movement as a platform sees it: what moved on its own and its customers' accounts. The other side of a
 * trade or deposit (the liquidity provider, the outside world) is not an account of the platform's.
 */
function movementView(movement: StoredMovement, platformCode: string) {
  return {
    movement_id: movement.movement_id,
    movement_timestamp: movement.created_at,
    movement_type: movement.movement_type,
    reference: movement.reference,
    changes: changesOf(movement, platformCode).map(changeView),
  };
}

async function page(ctx: AppContext, platformCode: string, list: string, filters: MovementFilters) {
  const { page: pageNumber, page_size, cursor, ...bindingFilters } = filters;
  const range = inclusiveRange(filters);
  // An empty range (from after to) has nothing in it; DynamoDB would refuse the inverted key condition.
  if (range.fromMs !== undefined && range.toMs !== undefined && range.fromMs > range.toMs) {
    return { items: [] as StoredMovement[], page: pageNumber, count: 0, nextCursor: null };
  }
  return pageOfMovements(
    ctx,
    platformCode,
    {
      account_id: filters.account_id,
      participant_code: filters.participant_code,
      asset: filters.asset,
      movement_type: filters.movement_type,
      ...range,
    },
    { page: pageNumber, pageSize: page_size, cursor },
    { list, filters: bindingFilters },
  );
}

/**
 * The account `GET /movements?account_id=` can be answered from, by its own movements list: once the
 * migration that gave older movements their account entries has run (for the table or this platform), for
 * an account of this platform, when the other filters are implied by the account (its owner, its asset) or
 * are on its entries (type, time). Otherwise undefined: the platform's list, filtered under the read budget.
 */
async function accountListOf(ctx: AppContext, platformCode: string, filters: MovementFilters) {
  const accountId = filters.account_id;
  if (accountId === undefined || !ACCOUNT_ID_PATTERN.test(accountId)) return undefined;
  if (!(await isMigrationApplied(ctx, MOVEMENT_ACCOUNT_ENTRIES, platformCode))) return undefined;
  const account = await getAccountById(ctx, accountId);
  // Another platform's account: its movements with this platform (a transfer between them) are on this platform's list only.
  if (!account || account.account_id !== accountId || account.platform_code !== platformCode) return undefined;
  // Movements touching this account and another participant's or asset's: only the platform's list knows them.
  if (filters.participant_code !== undefined && filters.participant_code !== account.participant_code) return undefined;
  if (filters.asset !== undefined && filters.asset !== account.asset) return undefined;
  return account;
}

/** `GET /movements?account_id=` from the account's own list: one Query of its entries, then their records. */
async function accountPage(
  ctx: AppContext,
  platformCode: string,
  account: { account_id: string; movement_count: number },
  filters: MovementFilters,
) {
  const { page: pageNumber, page_size, cursor, ...bindingFilters } = filters;
  const range = inclusiveRange(filters);
  if (range.fromMs !== undefined && range.toMs !== undefined && range.fromMs > range.toMs) {
    return { items: [] as StoredMovement[], page: pageNumber, count: 0, nextCursor: null };
  }
  const found = await pageOfAccountMovements(
    ctx,
    { accountId: account.account_id, movementCount: account.movement_count },
    { movement_type: filters.movement_type, ...range },
    { page: pageNumber, pageSize: page_size, cursor },
    { list: 'movements', platformCode, filters: bindingFilters },
  );
  return {
    ...found,
    items: await movementsById(
      ctx,
      found.items.map((entry) => entry.movement_id),
    ),
  };
}

/**
 * `GET /movements`: every movement on the platform's and its customers' accounts, newest first, filtered by
 * account, participant, asset, type and time. Filtered by one of the platform's accounts, it reads that
 * account's own list (full pages, and the account's count) once the migration `0001-movement-account-entries`
 * has run (docs/operations.md, "Migrations"); before, the platform's list filtered under the read budget.
 */
export async function listMovements(ctx: AppContext, platformCode: string, filters: MovementFilters) {
  const account = await accountListOf(ctx, platformCode, filters);
  const found = account
    ? await accountPage(ctx, platformCode, account, filters)
    : await page(ctx, platformCode, 'movements', filters);
  return listEnvelope(
    found.items.map((movement) => movementView(movement, platformCode)),
    { page: found.page, pageSize: filters.page_size, count: found.count, nextCursor: found.nextCursor },
  );
}

/**
 * `GET /accounts/{account_id}/movements`: the movements of one of the platform's accounts, newest first,
 * each with the account's change, read from the account's own entries. Another platform's account is a 404
 * like an unknown one.
 */
export async function listAccountMovements(
  ctx: AppContext,
  platformCode: string,
  accountId: string,
  filters: Omit<MovementFilters, 'account_id'>,
) {
  const account = await findAccountOfPlatform(ctx, platformCode, accountId);
  const { page: pageNumber, page_size, cursor, ...bindingFilters } = filters;
  const range = inclusiveRange(filters);
  // An empty range (from after to) has nothing in it; DynamoDB would refuse the inverted key condition.
  const found =
    range.fromMs !== undefined && range.toMs !== undefined && range.fromMs > range.toMs
      ? { items: [], page: pageNumber, count: 0, nextCursor: null }
      : await pageOfAccountMovements(
          ctx,
          { accountId: account.account_id, movementCount: account.movement_count },
          {
            participant_code: filters.participant_code,
            asset: filters.asset,
            movement_type: filters.movement_type,
            ...range,
          },
          { page: pageNumber, pageSize: page_size, cursor },
          { list: `account-movements:${account.account_id}`, platformCode, filters: bindingFilters },
        );
  return listEnvelope(
    found.items.map((movement) => ({
      movement_id: movement.movement_id,
      movement_timestamp: movement.created_at,
      movement_type: movement.movement_type,
      reference: movement.reference,
      account_id: account.account_id,
      asset: account.asset,
      change: formatAmount(movement.change, findAsset(account.asset)!),
    })),
    { page: found.page, pageSize: filters.page_size, count: found.count, nextCursor: found.nextCursor },
  );
}
