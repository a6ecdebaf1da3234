import { findAccountOfPlatform } from '../accounts/get-account.js';
import { findAsset } from '../domain/assets.js';
import { accountIdOf, type AccountRef } from '../domain/ledger.js';
import { formatAmount, Money } from '../domain/money.js';
import { listEnvelope } from '../domain/list-envelope.js';
import { pageOfAccountMovements, pageOfMovements, type StoredMovement } from '../store/movements.js';
import type { AppContext } from '../context.js';

export interface MovementTimeBounds {
  /** The reference API's bracket operators on the movement time (ms)... */
  'movement_timestamp[gt]'?: number;
  'movement_timestamp[gte]'?: number;
  'movement_timestamp[lt]'?: number;
  'movement_timestamp[lte]'?: number;
}

export interface MovementFilters extends MovementTimeBounds {
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
  const lows = [bounds['movement_timestamp[gte]'], gt === undefined ? undefined : gt + 1].filter((v): v is number => v !== undefined);
  const highs = [bounds['movement_timestamp[lte]'], lt === undefined ? undefined : lt - 1].filter((v): v is number => v !== undefined);
  return { ...(lows.length > 0 && { fromMs: Math.max(...lows) }), ...(highs.length > 0 && { toMs: Math.min(...highs) }) };
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
    const account: AccountRef = { participant_code: leg.participant_code, account_group: leg.account_group, account_label: leg.account_label, asset: leg.asset };
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
  return pageOfMovements(ctx, 
    platformCode,
    { account_id: filters.account_id, participant_code: filters.participant_code, asset: filters.asset, movement_type: filters.movement_type, ...range },
    { page: pageNumber, pageSize: page_size, cursor },
    { list, filters: bindingFilters },
  );
}

/**
 * `GET /movements`: every movement on the platform's and its customers' accounts, newest first, filtered by
 * account, participant, asset, type and time.
 */
export async function listMovements(ctx: AppContext, platformCode: string, filters: MovementFilters) {
  const found = await page(ctx, platformCode, 'movements', filters);
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
export async function listAccountMovements(ctx: AppContext, platformCode: string, accountId: string, filters: Omit<MovementFilters, 'account_id'>) {
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
          { participant_code: filters.participant_code, asset: filters.asset, movement_type: filters.movement_type, ...range },
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
