import { GetCommand, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { accountIdOf, accountKey, isUnguarded, type AccountRef, type Movement } from '../domain/ledger.js';
import { Money } from '../domain/money.js';
import { equalityFilter, pageWithCount, type ListIndex, type PageRequest } from './table/paging.js';
import { batchGetItems } from './table/batch-get.js';
import { keys } from './keys.js';
import { moneyAttr, readMoney } from './table/numbers.js';
import { ALL, readCount } from './table/counters.js';
import type { TaggedItem } from './table/transaction-items.js';
import { integerSince } from './table/item-versions.js';
import type { AppContext } from '../context.js';

/** The counter of `GET /accounts`, moved by the booking that opens an account. */
export const ACCOUNTS_LIST = 'accounts';
/** The counter of `GET /movements` (lib/store/movements.ts reads it). */
export const MOVEMENTS_LIST = 'movements';

export interface Account extends AccountRef {
  account_id: string;
  balance: Money;
  platform_code: string | null;
  last_update: number;
  /** Movements that changed the account since it carries the count (see lib/store/README.md "Lists"); 0 for system accounts. */
  movement_count: number;
}

/**
 * The account item's schema version (lib/store/README.md, "Item versions"). 2: it carries `last_update` and, a
 * platform or customer account (one with `platform_code`), `version` (its balance changes, which number its
 * `account_balance.changed` events; 0 when no booking has numbered it: an account from before versions, which
 * migration 0002 upgraded) and `movement_count` (its movement entries). A system account or outside-world shard
 * is unversioned: it need carry neither, at any version, and reads both as 0. 1 (no `item_version`): written
 * before, any of them may be absent (read as 0). Every booking's account update writes what 2 guarantees for
 * its kind (`accountAttributes` stamps it), so it may stamp a legacy item.
 */
export const ACCOUNT_ITEM_VERSION = 2;

interface AccountCounters {
  /** Balance changes numbered so far; 0: none (see ACCOUNT_ITEM_VERSION). */
  version: number;
  movementCount: number;
  lastUpdateMs: number;
}

/** An account item's counters, by its item version and kind (see ACCOUNT_ITEM_VERSION). */
export function accountCountersOf(item: Record<string, unknown>): AccountCounters {
  const numbered = item.platform_code === undefined ? Number.POSITIVE_INFINITY : ACCOUNT_ITEM_VERSION;
  const read = (attribute: string, since = numbered) => integerSince(item, attribute, since, 0);
  return {
    version: read('version'),
    movementCount: read('movement_count'),
    lastUpdateMs: read('last_update', ACCOUNT_ITEM_VERSION),
  };
}

/**
 * What a booking sets on an account besides its balance: its identity and time and, for a platform or
 * customer account only, its list entry (gsi1, `GET /accounts`) and id entry (gsi2, `GET /accounts/{id}`).
 * System accounts are in no index: every platform's bookings touch them, and an entry would put every
 * booking of the service on one index partition.
 */
export function accountAttributes(
  account: AccountRef,
  platformCode: string | null,
  nowMs: number,
): Record<string, string | number> {
  return {
    last_update: nowMs,
    account_id: accountIdOf(account),
    participant_code: account.participant_code,
    account_group: account.account_group,
    account_label: account.account_label,
    asset: account.asset,
    type: 'account',
    item_version: ACCOUNT_ITEM_VERSION,
    ...(platformCode && {
      gsi1pk: keys.accountsOfPlatform(platformCode),
      gsi1sk: keys.accountSortKey(account),
      platform_code: platformCode,
      gsi2pk: keys.accountById(accountIdOf(account)),
      gsi2sk: keys.accountByIdSortKey(),
    }),
  };
}

/**
 * A platform or customer account as the bookings that brought it to `balance` leave it (the same
 * attributes a booking sets, lib/ledger/batch.ts), as one unconditional Put with the count its opening adds. Only for
 * writing a history in bulk, where the movements' own balance updates are replaced by the final balances
 * (the benchmark seeds 100,000 accounts this way); a booking always goes through the booking engine. `changes`
 * is how many bookings it stands for (the account's version, which numbers its balance events, and its movement count).
 */
export function openedAccountItem(
  ctx: Pick<AppContext, 'tables'>,
  account: AccountRef,
  platformCode: string,
  balance: Money,
  nowMs: number,
  changes: number,
): TaggedItem {
  if (isUnguarded(account.participant_code))
    throw new Error('an outside-world account is sharded and in no list; it is never written whole');
  if (!Number.isInteger(changes) || changes < 1)
    throw new Error(`an opened account has had at least one change, not ${changes}`);
  return {
    item: {
      Put: {
        TableName: ctx.tables.main,
        // `version` and `movement_count`: the balance changes (movements) the account stands for; the first
        // numbers its account_balance.changed events, the second counts its movements list.
        Item: {
          ...keys.account(account),
          balance: moneyAttr(balance),
          ...accountAttributes(account, platformCode, nowMs),
          version: changes,
          movement_count: changes,
        },
      },
    },
    counts: [{ platformCode, list: ACCOUNTS_LIST, bucket: ALL, delta: 1 }],
  };
}

/** A movement record as stored, read back: its legs with their accounts and signed amounts. */
export function movementFromItem(item: Record<string, any>): Movement {
  return {
    movement_id: item.movement_id,
    type: item.movement_type,
    reference: item.reference,
    legs: (item.legs as Record<string, any>[]).map((leg) => ({
      account: {
        participant_code: leg.participant_code,
        account_group: leg.account_group,
        account_label: leg.account_label,
        asset: leg.asset,
      },
      platform_code: leg.platform_code ?? null,
      amount: readMoney(leg.amount),
    })),
  };
}

/** A booked movement as stored, or undefined. */
export async function getMovement(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  movementId: string,
): Promise<Movement | undefined> {
  const out = await ctx.db.send(
    new GetCommand({ TableName: ctx.tables.main, Key: keys.movement(movementId), ConsistentRead: true }),
  );
  return out.Item ? movementFromItem(out.Item) : undefined;
}

function toAccount(item: Record<string, any>): Account {
  const counters = accountCountersOf(item);
  return {
    participant_code: item.participant_code,
    account_group: item.account_group,
    account_label: item.account_label,
    asset: item.asset,
    account_id: item.account_id,
    balance: readMoney(item.balance),
    platform_code: item.platform_code ?? null,
    last_update: counters.lastUpdateMs,
    movement_count: counters.movementCount,
  };
}

/**
 * Shards of each outside-world balance (liquidity provider, external boundary, per group and asset). From
 * DynamoDB's documented limits; the arithmetic is in lib/store/README.md "Hot items".
 */
export const OUTSIDE_ACCOUNT_SHARDS = 16;

/**
 * Reads one account strongly consistently; an account never credited doesn't exist and reads as undefined.
 * A sharded (outside-world) account is the sum of its shards, read in one consistent batch.
 */
export async function getAccount(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  account: AccountRef,
): Promise<Account | undefined> {
  if (isUnguarded(account.participant_code)) return getShardedAccount(ctx, account);
  const out = await ctx.db.send(
    new GetCommand({ TableName: ctx.tables.main, Key: keys.account(account), ConsistentRead: true }),
  );
  return out.Item ? toAccount(out.Item) : undefined;
}

async function getShardedAccount(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  account: AccountRef,
): Promise<Account | undefined> {
  // The unsharded item too: balances booked before the accounts were sharded stay part of the sum.
  const shardKeys = [
    keys.account(account),
    ...Array.from({ length: OUTSIDE_ACCOUNT_SHARDS }, (_, shard) => keys.accountShard(account, shard)),
  ];
  const parts = (await batchGetItems(ctx, shardKeys, { consistent: true, what: 'sharded balance read' })).map(
    toAccount,
  );
  if (parts.length === 0) return undefined;
  return {
    ...parts[0]!,
    account_id: accountIdOf(account),
    balance: parts.reduce((sum, part) => sum.plus(part.balance), new Money(0)),
    last_update: Math.max(...parts.map((part) => part.last_update)),
  };
}

export async function balanceOf(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  account: AccountRef,
): Promise<Money> {
  return (await getAccount(ctx, account))?.balance ?? new Money(0);
}

/**
 * The account with this id, read strongly consistently once the id index has named it. The index is
 * eventually consistent on AWS: an account credited a moment ago may read as unknown for that moment.
 */
export async function getAccountById(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  accountId: string,
): Promise<Account | undefined> {
  const out = await ctx.db.send(
    new QueryCommand({
      TableName: ctx.tables.main,
      IndexName: 'gsi2',
      KeyConditionExpression: 'gsi2pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.accountById(accountId) },
      ProjectionExpression: 'participant_code, account_group, account_label, asset',
      Limit: 1,
    }),
  );
  const found = out.Items?.[0];
  if (!found) return undefined;
  return getAccount(ctx, {
    participant_code: found.participant_code,
    account_group: found.account_group,
    account_label: found.account_label,
    asset: found.asset,
  });
}

/** The filters of `GET /accounts`: exact matches on the account's four parts. */
interface AccountListFilters {
  participant_code?: string;
  account_group?: string;
  account_label?: string;
  asset?: string;
}

/**
 * One page of the accounts of a platform and of its customers, ordered by owner, group, label, asset, with
 * the count of those matching. The leading filters (owner, then group, then label) are a prefix of the sort
 * key, so they narrow the key range rather than the read.
 */
export async function pageOfAccounts(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'config' | 'caches' | 'retry' | 'cursorKey'>,
  platformCode: string,
  filters: AccountListFilters,
  request: PageRequest,
) {
  const order = ['participant_code', 'account_group', 'account_label', 'asset'] as const;
  const leading: string[] = [];
  // Three at most: the full key has no trailing separator, so the asset is matched as a filter.
  for (const part of order.slice(0, 3)) {
    const value = filters[part];
    if (value === undefined || value.includes('#')) break;
    leading.push(value);
  }
  const rest = Object.fromEntries(order.slice(leading.length).map((part) => [part, filters[part]]));
  const filter = equalityFilter(rest);
  const index: ListIndex = {
    indexName: 'gsi1',
    partition: { attribute: 'gsi1pk', value: keys.accountsOfPlatform(platformCode) },
    sortAttribute: 'gsi1sk',
    ...(leading.length > 0 && { sortRange: { beginsWith: keys.accountSortKeyPrefix(leading) } }),
    descending: false,
    ...(filter && { filter }),
  };
  const counter = filter || leading.length > 0 ? undefined : () => readCount(ctx, platformCode, ACCOUNTS_LIST);
  const page = await pageWithCount(
    ctx,
    index,
    request,
    { list: ACCOUNTS_LIST, platformCode, filters: { ...filters } },
    counter,
  );
  return { ...page, items: page.items.map(toAccount) };
}

/** Operations and tests: every account and every movement in the table (a full scan; never on a request path). */
export async function scanLedger(
  ctx: Pick<AppContext, 'db' | 'tables'>,
): Promise<{ accounts: Account[]; movements: Record<string, any>[] }> {
  const accounts: Account[] = [];
  const movements: Record<string, any>[] = [];
  let ExclusiveStartKey: Record<string, any> | undefined;
  do {
    const out = await ctx.db.send(
      new ScanCommand({
        TableName: ctx.tables.main,
        FilterExpression: '#type IN (:account, :movement)',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: { ':account': 'account', ':movement': 'movement' },
        ConsistentRead: true,
        ExclusiveStartKey,
      }),
    );
    for (const item of out.Items ?? []) {
      if (item.type === 'account') accounts.push(toAccount(item));
      else movements.push(item);
    }
    ExclusiveStartKey = out.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  // One account per account, as bookings name them: the shards of an outside-world balance summed.
  const merged = new Map<string, Account>();
  for (const account of accounts) {
    const key = accountKey(account);
    const seen = merged.get(key);
    merged.set(
      key,
      seen
        ? {
            ...seen,
            account_id: accountIdOf(account),
            balance: seen.balance.plus(account.balance),
            last_update: Math.max(seen.last_update, account.last_update),
          }
        : account,
    );
  }
  return { accounts: [...merged.values()], movements };
}
