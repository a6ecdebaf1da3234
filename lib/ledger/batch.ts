import { randomInt } from 'node:crypto';
import type { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import type { AppContext } from '../context.js';
import { applyBooking, type AccountState, type Refusal } from '../domain/group-commit.js';
import {
  accountIdOf,
  accountKey,
  isUnguarded,
  netChanges,
  type AccountRef,
  type Movement,
  type NetChange,
} from '../domain/ledger.js';
import { Money, plain } from '../domain/money.js';
import { ALL, counterUpdates } from '../store/table/counters.js';
import { type CountChange } from '../store/table/transaction-items.js';
import { eventItem } from '../store/events.js';
import {
  accountAttributes,
  accountIndexRemoval,
  accountItemKey,
  accountShardKey,
  ACCOUNTS_LIST,
  MOVEMENTS_LIST,
  OUTSIDE_ACCOUNT_SHARDS,
  parseAccount,
} from '../store/ledger.js';
import { batchGetItems } from '../store/table/batch-get.js';
import { accountEntity } from '../store/entities/ledger.js';
import { moneyAttr } from '../store/table/numbers.js';
import { MAX_TRANSACTION_ITEMS, type TransactItem } from '../store/table/transaction-items.js';
import { movementRecords } from '../store/movements.js';
import { movementOf, type StoredBooking } from './booking.js';

/**
 * One transaction for a batch of bookings (one booking on the cold path, several on a hot account's): their
 * own items, each movement's record and entries, one update per account the batch changes (the changes
 * summed, conditioned on the version read, so a committer whose read went stale, or that lost its lease,
 * commits nothing), one `account_balance.changed` event per booking and platform account with the balance
 * and version just after that booking, and the counters. lib/store/README.md, "Hot accounts", has the why.
 */

/** An account as one consistent read found it. */
export interface AccountRead {
  account: AccountRef;
  platformCode: string | null;
  exists: boolean;
  balance: Money;
  /** Balance changes so far: -1 never written, 0 none numbered yet (`parseAccount`). */
  version: number;
  /** Until when contention keeps the account's bookings in its queue (ms); 0 when it is not hot. */
  hotUntilMs: number;
}

/** Where each item of a transaction came from, so a failed condition is told to the right booking. */
export type ItemOrigin =
  | { kind: 'item'; booking: number; index: number }
  | { kind: 'record'; booking: number }
  | { kind: 'account'; key: string }
  | { kind: 'queue'; booking: number }
  /** A queued booking's result, stored on condition that none is: one there means it was answered before. */
  | { kind: 'result'; booking: number }
  | { kind: 'lease' }
  | { kind: 'other' };

/**
 * The accounts of a movement whose balance the engine reads: platform and customer accounts (their updates are
 * conditioned on the version read), and escrow and fee accounts it debits (the read checks the debit is covered).
 * The outside world's are blind, and so is a credit to an escrow or fee account: unversioned, its update is an
 * unconditioned addition, so nothing of it depends on a read (a convert-withdraw execution then reads nothing).
 */
export function readAccountsOf(
  movement: Movement | undefined,
): Array<{ account: AccountRef; platformCode: string | null }> {
  if (!movement) return [];
  return netChanges(movement.legs)
    .filter((change) => !isUnguarded(change.account.participant_code))
    .filter((change) => isVersioned(change) || change.change.isNegative())
    .map((change) => ({ account: change.account, platformCode: change.platform_code }));
}

/** Consistent reads of the accounts, in one BatchGetItem (100 keys at most: a movement has a handful). */
export async function readAccounts(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  wanted: ReadonlyArray<{ account: AccountRef; platformCode: string | null }>,
): Promise<Map<string, AccountRead>> {
  const reads = new Map<string, AccountRead>();
  if (wanted.length === 0) return reads;
  const unique = [...new Map(wanted.map((entry) => [accountKey(entry.account), entry])).values()];
  const items = await batchGetItems(
    ctx,
    unique.map((entry) => accountItemKey(entry.account)),
    { consistent: true, what: 'account reads' },
  );
  const found = new Map(items.map((item) => [String(item.pk), parseAccount(item)]));
  for (const entry of unique) {
    const stored = found.get(accountItemKey(entry.account).pk!);
    reads.set(accountKey(entry.account), {
      account: entry.account,
      platformCode: entry.platformCode,
      exists: stored !== undefined,
      balance: stored ? new Money(stored.balance) : new Money(0),
      version: stored ? stored.version : -1,
      hotUntilMs: stored?.hot_until_ms ?? 0,
    });
  }
  return reads;
}

/** A platform or customer account: versioned, with events and a movements list. */
const isVersioned = (change: Pick<NetChange, 'platform_code'>) => change.platform_code !== null;
const isGuarded = (change: NetChange) =>
  change.change.isNegative() && !isUnguarded(change.account.participant_code) && !change.mayOverdraw;

export interface PlannedBooking {
  booking: StoredBooking;
  /** Position in the batch's order (what the transaction's origins name). */
  position: number;
  outcome:
    | { kind: 'booked'; after: Map<string, { balance: Money; version: number }> }
    | { kind: 'refused'; refusal: Refusal; probes: ClaimProbe[] };
}

/**
 * A refused booking's own condition (a client id's claim, a state it expects) tested without being written: a
 * ConditionCheck with the item's own condition. A booking a debit can't cover is refused before its
 * transaction, so without it the answer would differ from the cold path's, where the booking's own items come
 * before the accounts and their failed condition is the one reported: a duplicate that also lacks funds would
 * hear "insufficient balance" rather than "already used", and a chunk of an award distribution another run
 * credited (taking its escrow lane's part with it) would hear, from its trades' ids, that a trade id is taken
 * rather than that the chunk is credited. The probes ride in the round's transaction in the booking's own item
 * order, and if one fails the booking is refused for the first of them, as the cold path would refuse it.
 */
interface ClaimProbe {
  index: number;
  item: TransactItem;
}

/**
 * The probes of a booking's own conditioned writes (Put, Update, Delete) whose failed condition has a meaning
 * of its own, in item order. Its condition checks are not probed: they name items (a participant, say) that
 * other bookings of the round check too, and a lock is found by the transaction when the booking is covered.
 */
function claimProbes(booking: StoredBooking): ClaimProbe[] {
  return booking.items.flatMap((stored, index) => {
    if (!stored.refusal) return [];
    const write = stored.item.Put ?? stored.item.Update ?? stored.item.Delete;
    const condition = write?.ConditionExpression;
    if (!write || !condition) return [];
    const key = stored.item.Put
      ? { pk: stored.item.Put.Item?.pk, sk: stored.item.Put.Item?.sk }
      : (write as { Key?: Record<string, unknown> }).Key;
    const { pk, sk } = key ?? {};
    // An update's names and values serve its update expression too; a check may carry only those its condition uses.
    const names = usedIn(condition, write.ExpressionAttributeNames);
    const values = usedIn(condition, write.ExpressionAttributeValues);
    return [
      {
        index,
        item: {
          ConditionCheck: {
            TableName: write.TableName,
            Key: { pk, ...(sk !== undefined && { sk }) },
            ConditionExpression: condition,
            ...(names && { ExpressionAttributeNames: names }),
            ...(values && { ExpressionAttributeValues: values }),
          },
        },
      },
    ];
  });
}

/** The entries of an expression's names (`#x`) or values (`:x`) that `expression` uses; undefined when none. */
function usedIn<T>(expression: string, entries: Record<string, T> | undefined): Record<string, T> | undefined {
  if (!entries) return undefined;
  const tokens = new Set(expression.match(/[#:][A-Za-z0-9_]+/g) ?? []);
  const used = Object.entries(entries).filter(([token]) => tokens.has(token));
  return used.length > 0 ? Object.fromEntries(used) : undefined;
}

interface BatchPlan {
  planned: PlannedBooking[];
  /** Bookings left for a later batch (the transaction is full, or one names an item another of the batch names). */
  deferred: StoredBooking[];
}

/**
 * Takes bookings in order while they fit one transaction: applies each to the balances read, refusing those a
 * guarded debit can't cover (`refuseUncovered`; the cold path leaves that to the transaction's own guard),
 * and stops at the first that would exceed the item limit or name an item the batch already names (a
 * transaction may name an item once; identical condition checks, such as the platform's participant being
 * active, are merged). `queued`: each booking also deletes its queue entry and stores its result (2 items).
 * `reserved`: items the caller adds to the transaction itself (a hot round's lease: 1).
 */
export function planBatch(
  bookings: readonly StoredBooking[],
  reads: ReadonlyMap<string, AccountRead>,
  options: { queued: boolean; refuseUncovered: boolean; reserved?: number },
): BatchPlan {
  const limit = MAX_TRANSACTION_ITEMS - (options.reserved ?? 0);
  const states = new Map<string, AccountState>(
    [...reads].map(([key, read]) => [key, { balance: read.balance, version: read.version }]),
  );
  const named = new Set<string>();
  // Each item's key with the one operation the batch has on it: a condition check and a write on one key, or two
  // different checks, would make the transaction invalid (and a round that is invalid would be tried again and
  // again, holding up the queue behind it).
  const operationOn = new Map<string, string>();
  const accounts = new Set<string>();
  const counters = new Set<string>();
  let size = 0;
  const planned: PlannedBooking[] = [];
  for (const [position, booking] of bookings.entries()) {
    const movement = movementOf(booking);
    const changes = movement ? netChanges(movement.legs) : [];
    const ownKeys = booking.items.map((stored) => itemIdentity(stored.item));
    const mergeable = booking.items.map((stored) => stored.item.ConditionCheck !== undefined);
    if (ownKeys.some((key, i) => named.has(key) && !(mergeable[i] && named.has(`check:${key}`)))) break;
    const ownItemKeys = booking.items.map((stored) => keyIdentity(stored.item));
    if (ownItemKeys.some((key, i) => (operationOn.get(key) ?? ownKeys[i]) !== ownKeys[i])) break;
    const newItems = ownKeys.filter((key) => !named.has(key)).length;
    const newAccounts = changes.filter((change) => !accounts.has(accountKey(change.account))).length;
    const versionedChanges = changes.filter(isVersioned).length;
    const platforms = new Set(changes.map((change) => change.platform_code).filter((code) => code !== null)).size;
    const countKeys = counterKeysOf(booking, changes);
    const newCounters = new Set(countKeys.filter((key) => !counters.has(key))).size;
    // Its items, its record and second-platform entry, an entry and an event per platform account, queue work.
    const cost =
      newItems +
      (movement ? 1 + Math.max(0, platforms - 1) : 0) +
      2 * versionedChanges +
      newAccounts +
      newCounters +
      (options.queued ? 2 : 0);
    if (planned.length > 0 && size + cost > limit) break;
    const applied = applyBooking(
      states,
      changes.map((change) => ({
        key: accountKey(change.account),
        change: change.change,
        guarded: options.refuseUncovered && isGuarded(change),
      })),
    );
    if (applied.kind === 'refused') {
      const refusal = insufficientBalance(changes, applied.key, applied.change);
      // Its own conditions are probed where the transaction has room and names none of their items already:
      // all of them or none, so the one reported is the first that fails in the booking's own order.
      const probes = claimProbes(booking);
      const fits =
        probes.every((probe) => !named.has(keyIdentity(probe.item))) &&
        size + (options.queued ? 2 : 0) + probes.length <= limit;
      const kept = fits ? probes : [];
      for (const probe of kept) named.add(keyIdentity(probe.item));
      planned.push({ booking, position, outcome: { kind: 'refused', refusal, probes: kept } });
      size += (options.queued ? 2 : 0) + kept.length;
      continue;
    }
    size += cost;
    ownKeys.forEach((key, i) => {
      named.add(key);
      operationOn.set(ownItemKeys[i]!, key);
      if (mergeable[i]) named.add(`check:${key}`);
    });
    for (const change of changes) accounts.add(accountKey(change.account));
    for (const key of countKeys) counters.add(key);
    planned.push({
      booking,
      position,
      outcome: {
        kind: 'booked',
        after: new Map(applied.after.map(({ key, balance, version }) => [key, { balance, version }])),
      },
    });
  }
  return { planned, deferred: bookings.slice(planned.length) };
}

/** The counters a booking moves: its own items' counts, and each of its platforms' movements and accounts counts (an account it opens counts). */
function counterKeysOf(booking: StoredBooking, changes: readonly NetChange[]): string[] {
  return [
    ...booking.items.flatMap((stored) => (stored.counts ?? []).map(counterIdentity)),
    ...[...new Set(changes.map((change) => change.platform_code).filter((code) => code !== null))].flatMap((code) => [
      counterIdentity({ platformCode: code, list: MOVEMENTS_LIST, bucket: ALL }),
      counterIdentity({ platformCode: code, list: ACCOUNTS_LIST, bucket: ALL }),
    ]),
  ];
}

/** The refusal of a booking whose guarded debit of the account at `key` the balance can't cover. */
function insufficientBalance(changes: readonly NetChange[], key: string, change: Money): Refusal {
  const account = changes.find((candidate) => accountKey(candidate.account) === key)!.account;
  return {
    status: 400,
    errors: [
      `${account.participant_code}/${account.account_group}/${account.account_label}: insufficient ${account.asset} balance for ${change.abs().toFixed()}`,
    ],
  };
}

/** The item a transaction item names (a transaction may name each once). */
function itemIdentity(item: TransactItem): string {
  // Identical condition checks merge: the identity then covers the whole check.
  return item.ConditionCheck ? `${keyIdentity(item)}|${JSON.stringify(item.ConditionCheck)}` : keyIdentity(item);
}

/** The table and key a transaction item names. */
function keyIdentity(item: TransactItem): string {
  const operation = item.Put ?? item.Update ?? item.Delete ?? item.ConditionCheck;
  const key = item.Put
    ? { pk: item.Put.Item?.pk, sk: item.Put.Item?.sk }
    : (operation as { Key?: Record<string, unknown> }).Key;
  return `${operation?.TableName}|${String(key?.pk)}|${String(key?.sk)}`;
}

const counterIdentity = (change: Pick<CountChange, 'platformCode' | 'list' | 'bucket'>) =>
  JSON.stringify([change.platformCode, change.list, change.bucket]);

export interface BatchTransaction {
  items: TransactItem[];
  origins: ItemOrigin[];
}

/**
 * On the hot path, each planned booking's answer in the batch's transaction: its queue entry removed, its result
 * stored (lib/ledger/hot-account.ts, `queueAnswers`).
 */
export type QueueAnswers = (planned: readonly PlannedBooking[]) => OriginItem[];

/** The transaction that commits a planned batch (`answers` given on the hot path: each booking's queue entry and result too). */
export function batchTransaction(
  ctx: Pick<AppContext, 'tables'>,
  plan: BatchPlan,
  reads: ReadonlyMap<string, AccountRead>,
  answers: QueueAnswers | undefined,
  nowMs: number,
): BatchTransaction {
  const booked = plan.planned.filter((entry) => entry.outcome.kind === 'booked');
  // Built in this order, which the items keep: the counts each part moves are written last, in one update per counter.
  const own = bookingsOwnItems(booked);
  const records = bookedMovementRecords(ctx, booked);
  const accounts = accountUpdates(ctx, booked, reads, nowMs);
  const events = booked.flatMap((entry) => balanceEvents(ctx, entry));
  const answered = answers ? answers(plan.planned) : [];
  const counts = [...own.counts, ...records.counts, ...accounts.counts];
  const probes = plan.planned.flatMap(({ outcome, position }) =>
    outcome.kind === 'refused'
      ? outcome.probes.map(
          ({ index, item }): OriginItem => ({ item, origin: { kind: 'item', booking: position, index } }),
        )
      : [],
  );
  const all: OriginItem[] = [
    ...own.items,
    ...probes,
    ...records.items,
    ...accounts.items,
    ...events,
    ...answered,
    ...counterUpdates(ctx, counts).map((item): OriginItem => ({ item, origin: { kind: 'other' } })),
  ];
  return { items: all.map(({ item }) => item), origins: all.map(({ origin }) => origin) };
}

/** The first item whose condition failed, by position (claims come first, so a duplicate hears it is one). */
export function firstFailure(
  error: TransactionCanceledException,
  transaction: BatchTransaction,
): ItemOrigin | undefined {
  const reasons = error.CancellationReasons ?? [];
  const index = reasons.findIndex((reason) => reason.Code === 'ConditionalCheckFailed');
  if (index < 0 || index >= transaction.origins.length) return undefined;
  return transaction.origins[index];
}

/** Every item whose condition failed or that conflicted with another write, in item order, with the reason's code. */
export function failedItems(
  error: TransactionCanceledException,
  transaction: BatchTransaction,
): Array<{ origin: ItemOrigin; code: 'ConditionalCheckFailed' | 'TransactionConflict' }> {
  return (error.CancellationReasons ?? []).flatMap((reason, index) => {
    const origin = transaction.origins[index];
    if (!origin || (reason.Code !== 'ConditionalCheckFailed' && reason.Code !== 'TransactionConflict')) return [];
    return [{ origin, code: reason.Code }];
  });
}

/** A transaction item with where it came from. */
export interface OriginItem {
  item: TransactItem;
  origin: ItemOrigin;
}

/** Part of a batch's transaction: its items, and the counts they move. */
interface BatchPart {
  items: OriginItem[];
  counts: CountChange[];
}

/** The bookings' own items, an item two of them name written once (an identical condition check, merged). */
function bookingsOwnItems(booked: readonly PlannedBooking[]): BatchPart {
  const part: BatchPart = { items: [], counts: [] };
  const seen = new Set<string>();
  for (const { booking, position } of booked) {
    booking.items.forEach((stored, index) => {
      const identity = itemIdentity(stored.item);
      if (seen.has(identity)) return;
      seen.add(identity);
      part.items.push({ item: stored.item, origin: { kind: 'item', booking: position, index } });
      part.counts.push(...(stored.counts ?? []));
    });
  }
  return part;
}

/** Each booked movement's record and entries (the record names its booking), +1 on each of its platforms' movements. */
function bookedMovementRecords(ctx: Pick<AppContext, 'tables'>, booked: readonly PlannedBooking[]): BatchPart {
  const part: BatchPart = { items: [], counts: [] };
  for (const { booking, position } of booked) {
    const movement = movementOf(booking);
    if (!movement) continue;
    const records = movementRecords(ctx, movement, booking.atMs);
    records.forEach((item, i) =>
      part.items.push({ item, origin: i === 0 ? { kind: 'record', booking: position } : { kind: 'other' } }),
    );
    const platforms = [
      ...new Set(movement.legs.map((leg) => leg.platform_code).filter((code): code is string => code !== null)),
    ];
    part.counts.push(
      ...platforms.map((platformCode) => ({ platformCode, list: MOVEMENTS_LIST, bucket: ALL, delta: 1 })),
    );
  }
  return part;
}

/** What the batch does to one account: its changes summed, how many bookings change it, whether a guard applies. */
interface AccountTotal {
  change: NetChange;
  total: Money;
  bookings: number;
  guardedDebit: boolean;
  overdraws: boolean;
}

/** One update per account the batch changes (the sum of its changes, its version moved by their number), +1 on the accounts count of each platform account it opens. */
function accountUpdates(
  ctx: Pick<AppContext, 'tables'>,
  booked: readonly PlannedBooking[],
  reads: ReadonlyMap<string, AccountRead>,
  nowMs: number,
): BatchPart {
  const part: BatchPart = { items: [], counts: [] };
  for (const [key, entry] of accountTotals(booked)) {
    const { item, opens } = accountUpdate(ctx, entry.change, reads.get(key), entry, nowMs);
    part.items.push({ item, origin: { kind: 'account', key } });
    if (opens && entry.change.platform_code)
      part.counts.push({ platformCode: entry.change.platform_code, list: ACCOUNTS_LIST, bucket: ALL, delta: 1 });
  }
  return part;
}

/** The booked movements' changes summed per account, in the order the accounts first appear. */
function accountTotals(booked: readonly PlannedBooking[]): Map<string, AccountTotal> {
  const touched = new Map<string, AccountTotal>();
  for (const { booking } of booked) {
    for (const change of netChanges(movementOf(booking)?.legs ?? [])) {
      const key = accountKey(change.account);
      const seenChange = touched.get(key);
      touched.set(key, {
        change,
        total: (seenChange?.total ?? new Money(0)).plus(change.change),
        bookings: (seenChange?.bookings ?? 0) + 1,
        guardedDebit: (seenChange?.guardedDebit ?? false) || isGuarded(change),
        overdraws: (seenChange?.overdraws ?? false) || (change.change.isNegative() && change.mayOverdraw),
      });
    }
  }
  return touched;
}

/** A booking's events: per platform account, the balance and version just after it. */
function balanceEvents(ctx: Pick<AppContext, 'tables'>, entry: PlannedBooking): OriginItem[] {
  const movement = movementOf(entry.booking);
  if (!movement || entry.outcome.kind !== 'booked') return [];
  const items: OriginItem[] = [];
  for (const change of netChanges(movement.legs).filter(isVersioned)) {
    const after = entry.outcome.after.get(accountKey(change.account))!;
    const accountId = accountIdOf(change.account);
    const event = eventItem(
      ctx,
      {
        type: 'account_balance.changed',
        platformCode: change.platform_code!,
        resource: { type: 'account', id: accountId },
        sequence: after.version,
        data: {
          account_id: accountId,
          participant_code: change.account.participant_code,
          account_group: change.account.account_group,
          account_label: change.account.account_label,
          asset: change.account.asset,
          balance: plain(after.balance),
          movement: {
            movement_id: movement.movement_id,
            type: movement.type,
            reference: movement.reference,
            change: plain(change.change),
          },
          last_update: entry.booking.atMs,
        },
      },
      entry.booking.atMs,
    );
    items.push({ item: event.item, origin: { kind: 'other' } });
  }
  return items;
}

/** How long contention keeps an account's bookings in its queue after a batch of more than one. */
const HOT_FOR_MS = 10_000;

/**
 * One account's update for the batch. A platform or customer account is conditioned on the version read
 * (or on being absent, or on predating versions), so nothing moved it since; its version moves by the
 * batch's bookings, its movement count too. The outside world's balances are blind additions to a shard
 * drawn at random; escrow and fee accounts are blind too, with the debit guard on the sum.
 */
function accountUpdate(
  ctx: Pick<AppContext, 'tables'>,
  change: NetChange,
  read: AccountRead | undefined,
  batch: AccountBatch,
  nowMs: number,
): { item: TransactItem; opens: boolean } {
  const { account, platform_code } = change;
  const expression = balanceExpression(account, platform_code, batch, nowMs);
  if (isUnguarded(account.participant_code)) {
    const key = accountShardKey(account, randomInt(OUTSIDE_ACCOUNT_SHARDS));
    return { item: blindUpdate(ctx, key, expression, { guarded: false }), opens: false };
  }
  if (!platform_code)
    return { item: blindUpdate(ctx, accountItemKey(account), expression, { guarded: true }), opens: false };
  return versionedUpdate(ctx, account, read, batch, nowMs, expression);
}

/** What the batch does to one account, as its update needs it. */
type AccountBatch = Pick<AccountTotal, 'total' | 'bookings' | 'guardedDebit' | 'overdraws'>;

/** An account update's parts, which the versioned update adds to before joining them. */
interface UpdateExpression {
  sets: string[];
  names: Record<string, string>;
  values: Record<string, unknown>;
  conditions: string[];
}

/** Every account's update: the batch's sum added to the balance, the account's attributes set, the debit guard on the sum. */
function balanceExpression(
  account: AccountRef,
  platformCode: string | null,
  batch: AccountBatch,
  nowMs: number,
): UpdateExpression {
  const attributes = accountAttributes(account, platformCode, nowMs);
  const names = { ...attributes.names };
  const values: Record<string, unknown> = {
    ':zero': moneyAttr(new Money(0)),
    ':change': moneyAttr(batch.total),
    ...attributes.values,
  };
  const sets = ['balance = if_not_exists(balance, :zero) + :change', attributes.expression];
  const conditions: string[] = [];
  // The guard on the sum: each booking was checked in order against the read; this holds the read to it.
  if (batch.guardedDebit && !batch.overdraws && batch.total.isNegative()) {
    conditions.push('balance >= :needed');
    values[':needed'] = moneyAttr(batch.total.abs());
  }
  return { sets, names, values, conditions };
}

/**
 * An unversioned account's update (the outside world's shards, escrow and fee accounts): a blind addition
 * that leaves the lists' indexes. `guarded: false` for the outside world's shards: their debits are never guarded.
 */
function blindUpdate(
  ctx: Pick<AppContext, 'tables'>,
  key: Record<string, string>,
  { sets, names, values, conditions }: UpdateExpression,
  { guarded }: { guarded: boolean },
): TransactItem {
  const removal = accountIndexRemoval();
  return {
    Update: {
      TableName: ctx.tables.main,
      Key: key,
      UpdateExpression: `SET ${sets.join(', ')} REMOVE ${removal.expression}`,
      ExpressionAttributeNames: { ...names, ...removal.names },
      ExpressionAttributeValues: values,
      ...(guarded && conditions.length > 0 && { ConditionExpression: conditions.join(' AND ') }),
    },
  };
}

/**
 * A platform or customer account's update: conditioned on the version read (or on being absent, or on
 * predating versions), its version and movement count moved by the batch's bookings.
 */
function versionedUpdate(
  ctx: Pick<AppContext, 'tables'>,
  account: AccountRef,
  read: AccountRead | undefined,
  batch: AccountBatch,
  nowMs: number,
  { sets, names, values, conditions }: UpdateExpression,
): { item: TransactItem; opens: boolean } {
  const version = read?.version ?? -1;
  const exists = read?.exists ?? false;
  sets.push('version = :nextVersion', 'movement_count = if_not_exists(movement_count, :none) + :entries');
  values[':nextVersion'] = Math.max(0, version) + batch.bookings;
  values[':none'] = 0;
  values[':entries'] = batch.bookings;
  if (!exists) conditions.push('attribute_not_exists(pk)');
  // None numbered: the legacy item lacks `version`, or (migrated, or read before the migration wrote it) holds 0.
  else if (version === 0)
    conditions.push('attribute_exists(pk) AND (attribute_not_exists(version) OR version = :none)');
  else {
    conditions.push('version = :readVersion');
    values[':readVersion'] = version;
  }
  // Still contended: the account stays hot a while longer (its bookings keep queueing).
  if (batch.bookings > 1) {
    sets.push('hot_until_ms = :hotUntil');
    values[':hotUntil'] = nowMs + HOT_FOR_MS;
  }
  const update = `SET ${sets.join(', ')}`;
  const { Update } = accountEntity.update(ctx.tables, account, {
    update,
    condition: conditions.join(' AND '),
    names,
    values,
  });
  // The entity's Update is the command's input, whose expression is optional; a transaction's needs it.
  return { item: { Update: { ...Update, UpdateExpression: update } }, opens: !exists };
}
