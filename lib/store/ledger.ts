import { GetCommand, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import {
  accountIdOf,
  accountKey,
  isUnguarded,
  type AccountRef,
  type Movement,
  type MovementType,
} from '../domain/ledger.js';
import { Money, plain } from '../domain/money.js';
import { equalityFilter, pageWithCount, type PageRequest } from './table/paging.js';
import { batchGetItems } from './table/batch-get.js';
import { keepLookup } from './table/kept-lookups.js';
import { ALL, readCount } from './table/counters.js';
import type { TaggedItem } from './table/transaction-items.js';
import { StoredItemError, type IndexAssignment } from './entity/entity.js';
import {
  accountEntity,
  accountShardEntity,
  movementEntity,
  type StoredAccount,
  type StoredMovementItem,
} from './entities/ledger.js';
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
 * The account item's schema version (lib/store/README.md, "Item versions"; `accountEntity`, which fills what
 * version 1 lacked). 2: it carries `last_update` and, a platform or customer account (one with
 * `platform_code`), `version` (its balance changes, which number its `account_balance.changed` events; 0 when
 * no booking has numbered it: an account from before versions, which migration 0002 upgraded) and
 * `movement_count` (its movement entries). A system account or outside-world shard is unversioned: it need
 * carry neither, at any version, and reads both as 0. Every booking's account update writes what 2
 * guarantees for its kind (`accountAttributes` stamps it), so it may stamp a legacy item.
 */
export const ACCOUNT_ITEM_VERSION = accountEntity.version!;

/** An account item read back, its counters read by its kind (see ACCOUNT_ITEM_VERSION). */
export interface ReadAccount extends StoredAccount {
  /** Balance changes numbered so far; 0: none. */
  version: number;
  movement_count: number;
}

/**
 * An account item (or an outside-world shard) parsed by its entity. A platform or customer account of version 2
 * without its counters is broken (a writer stamped a version it did not complete): an error, never a default.
 */
export function parseAccount(item: Readonly<Record<string, unknown>>): ReadAccount {
  const account = accountEntity.parse(item);
  if (account.platform_code !== undefined) {
    const missing = (['version', 'movement_count'] as const).filter((name) => account[name] === undefined);
    if (missing.length > 0)
      throw new StoredItemError(
        accountEntity.type,
        `${String(item.pk)} / ${String(item.sk)}`,
        missing.map((name) => `${name}: absent at item_version ${String(item.item_version)}`),
      );
  }
  return { ...account, version: account.version ?? 0, movement_count: account.movement_count ?? 0 };
}

/**
 * What a booking sets on an account besides its balance, as an update's `SET` fragment: its identity and time,
 * type and version and, for a platform or customer account only, its list entry (gsi1, `GET /accounts`) and id
 * entry (gsi2, `GET /accounts/{id}`). System accounts are in no index: every platform's bookings touch them, and
 * an entry would put every booking of the service on one index partition.
 */
export function accountAttributes(account: AccountRef, platformCode: string | null, nowMs: number): IndexAssignment {
  const parts = { ...accountParts(account), account_id: accountIdOf(account) };
  const attributes = Object.entries({
    ...accountEntity.encode({ last_update: nowMs, ...parts, ...(platformCode && { platform_code: platformCode }) }),
    type: accountEntity.type,
    item_version: ACCOUNT_ITEM_VERSION,
  });
  const indexes = platformCode
    ? [
        accountEntity.indexAssignment('gsi1', { ...parts, platform_code: platformCode }),
        accountEntity.indexAssignment('gsi2', parts),
      ]
    : [];
  return {
    expression: [...attributes.map((_, i) => `#a${i} = :a${i}`), ...indexes.map((index) => index.expression)].join(
      ', ',
    ),
    names: Object.assign(
      Object.fromEntries(attributes.map(([name], i) => [`#a${i}`, name])),
      ...indexes.map((index) => index.names),
    ) as Record<string, string>,
    values: Object.assign(
      Object.fromEntries(attributes.map(([, value], i) => [`:a${i}`, value])),
      ...indexes.map((index) => index.values),
    ) as Record<string, unknown>,
  };
}

/** The `REMOVE` fragment taking an account out of the lists' indexes (an unversioned account is in none). */
export function accountIndexRemoval(): Omit<IndexAssignment, 'values'> {
  const indexes = [accountEntity.indexRemoval('gsi1'), accountEntity.indexRemoval('gsi2')];
  return {
    expression: indexes.map((index) => index.expression).join(', '),
    names: Object.assign({}, ...indexes.map((index) => index.names)) as Record<string, string>,
  };
}

/** An account's four parts alone (what its key is made of). */
function accountParts(account: AccountRef): AccountRef {
  return {
    participant_code: account.participant_code,
    account_group: account.account_group,
    account_label: account.account_label,
    asset: account.asset,
  };
}

/** An account's item key. */
export function accountItemKey(account: AccountRef): Record<string, string> {
  return accountEntity.key(account);
}

/** The key of one shard of an outside-world account. */
export function accountShardKey(account: AccountRef, shard: number): Record<string, string> {
  return accountShardEntity.key({ ...account, shard });
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
    // `version` and `movement_count`: the balance changes (movements) the account stands for; the first
    // numbers its account_balance.changed events, the second counts its movements list.
    item: accountEntity.put(ctx.tables, {
      ...accountParts(account),
      account_id: accountIdOf(account),
      balance: plain(balance),
      last_update: nowMs,
      platform_code: platformCode,
      version: changes,
      movement_count: changes,
    }),
    counts: [{ platformCode, list: ACCOUNTS_LIST, bucket: ALL, delta: 1 }],
  };
}

/** A movement record as stored, read back: its legs with their accounts and signed amounts. */
export function movementFromItem(item: Readonly<Record<string, unknown>>): Movement {
  return movementOfRecord(movementEntity.parse(item));
}

/** A movement record (or a second platform's entry) as parsed, as the movement it books. */
export function movementOfRecord(record: StoredMovementItem): Movement {
  return {
    movement_id: record.movement_id,
    // Written from a Movement's type, so one of them.
    type: record.movement_type as MovementType,
    reference: record.reference,
    legs: record.legs.map((leg) => ({
      account: {
        participant_code: leg.participant_code,
        account_group: leg.account_group,
        account_label: leg.account_label,
        asset: leg.asset,
      },
      platform_code: leg.platform_code ?? null,
      amount: new Money(leg.amount),
    })),
  };
}

/** A booked movement as stored, or undefined. */
export async function getMovement(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  movementId: string,
): Promise<Movement | undefined> {
  const out = await ctx.db.send(
    new GetCommand(movementEntity.get(ctx.tables, { movement_id: movementId }, { consistent: true })),
  );
  return out.Item ? movementFromItem(out.Item) : undefined;
}

function toAccount(item: Readonly<Record<string, unknown>>): Account {
  const stored = parseAccount(item);
  return {
    participant_code: stored.participant_code,
    account_group: stored.account_group,
    account_label: stored.account_label,
    asset: stored.asset,
    account_id: stored.account_id,
    balance: new Money(stored.balance),
    platform_code: stored.platform_code ?? null,
    last_update: stored.last_update,
    movement_count: stored.movement_count,
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
  const out = await ctx.db.send(new GetCommand(accountEntity.get(ctx.tables, account, { consistent: true })));
  return out.Item ? toAccount(out.Item) : undefined;
}

async function getShardedAccount(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  account: AccountRef,
): Promise<Account | undefined> {
  // The unsharded item too: balances booked before the accounts were sharded stay part of the sum.
  const shardKeys = [
    accountItemKey(account),
    ...Array.from({ length: OUTSIDE_ACCOUNT_SHARDS }, (_, shard) => accountShardKey(account, shard)),
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
 * The id is the hash of the account's parts, so what the index names is kept for the context's life: a warm
 * read by id is the account's one consistent read.
 */
export async function getAccountById(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry' | 'caches'>,
  accountId: string,
): Promise<Account | undefined> {
  const kept = ctx.caches.accountRefs.get(accountId);
  if (kept) return getAccount(ctx, kept);
  const out = await ctx.db.send(
    new QueryCommand({
      ...accountEntity.query(ctx.tables, 'gsi2', accountEntity.indexPartition('gsi2', { account_id: accountId })),
      Limit: 1,
    }),
  );
  const found = out.Items?.[0];
  if (!found) return undefined;
  const parts = accountParts(accountEntity.parse(found));
  if (accountIdOf(parts) === accountId) keepLookup(ctx.caches.accountRefs, accountId, parts);
  return getAccount(ctx, parts);
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
  const [participant_code, account_group, account_label] = leading;
  const prefix = accountEntity.indexSortPrefix('gsi1', { participant_code, account_group, account_label });
  const index = accountEntity.listIndex(
    'gsi1',
    { platform_code: platformCode },
    {
      // The leading parts given and the separator after each.
      ...(leading.length > 0 && { sortRange: { beginsWith: prefix } }),
      descending: false,
      ...(filter && { filter }),
    },
  );
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
): Promise<{ accounts: Account[]; movements: StoredMovementItem[] }> {
  const accounts: Account[] = [];
  const movements: StoredMovementItem[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const out = await ctx.db.send(
      new ScanCommand({
        TableName: ctx.tables.main,
        FilterExpression: '#type IN (:account, :movement)',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: { ':account': accountEntity.type, ':movement': movementEntity.type },
        ConsistentRead: true,
        ExclusiveStartKey,
      }),
    );
    for (const item of out.Items ?? []) {
      if (item.type === accountEntity.type) accounts.push(toAccount(item));
      else movements.push(movementEntity.parse(item));
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
