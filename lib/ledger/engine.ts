import { randomUUID } from 'node:crypto';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, UpdateCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import type { AppContext } from '../context.js';
import type { QueuedBookingRef } from '../domain/errors.js';
import { type AccountRef, accountKey, netChanges, type Movement } from '../domain/ledger.js';
import { Money, plain } from '../domain/money.js';
import { parseAccount } from '../store/ledger.js';
import { keepLookup } from '../store/table/kept-lookups.js';
import { documentItemOf } from '../store/table/returned-item.js';
import { accountEntity } from '../store/entities/ledger.js';
import { retryReason, withRetry } from '../store/table/retry.js';
import type { TaggedItem } from '../store/table/transaction-items.js';
import {
  insufficientFunds,
  newBookingId,
  settleItems,
  storedBooking,
  type Booking,
  type StoredBooking,
} from './booking.js';
import {
  batchTransaction,
  firstFailure,
  planBatch,
  readAccounts,
  readAccountsOf,
  type AccountRead,
  type BatchTransaction,
  type PlannedBooking,
} from './batch.js';
import { writtenUnlessConditionFailed } from '../store/table/conditional.js';

/**
 * The booking engine: every balance change of the service goes through `book` (lib/store/README.md, "Hot
 * accounts").
 *
 * Cold path: one consistent read of the accounts the movement changes, one transaction. Nothing else.
 * Hot path (lib/ledger/hot-account.ts, imported on a container's first contention): when an account's read
 * goes stale twice under one booking (others keep moving it), the account is marked hot and its bookings
 * queue under it; whoever holds the account's lease commits the queue in order, many bookings per
 * transaction, and each request waits for its own result (flat combining: every waiting request is a
 * candidate committer, so there is no worker to run or to lose).
 */
export async function book(
  ctx: Pick<AppContext, 'clock' | 'db' | 'tables' | 'logger' | 'config' | 'caches' | 'retry' | 'deadlines'>,
  booking: Booking,
): Promise<void> {
  const settled: Booking = { ...booking, items: await settleItems(booking.items) };
  const hot = await bookCold(ctx, settled);
  if (!hot) return;
  const queued = await withClaimsMadeApart(settled);
  // Loaded on a container's first contention: most never meet one, so their cold start doesn't compile it.
  const { bookHot } = await import('./hot-account.js');
  await bookHot(ctx, queued, hot);
}

/**
 * A claim its request makes with the booking can't wait in a queue, where only data travels: the request makes
 * it apart now, and the booking queues with what stands in for it (the X-Request-Id's completion), without
 * running its use case again.
 */
async function withClaimsMadeApart(booking: Booking): Promise<Booking> {
  if (!booking.items.some((tagged) => tagged.queuedInstead)) return booking;
  const items = await Promise.all(
    booking.items.map((tagged) => (tagged.queuedInstead ? tagged.queuedInstead() : [tagged])),
  );
  return { ...booking, items: await settleItems(items.flat()) };
}

/**
 * A retry of a request whose booking was left queued commits the account's queue itself until the booking has
 * its result or the wait bound passes (lib/ledger/hot-account.ts, where it is told in full). Here so that the
 * idempotency middleware reaches it through the engine, and loads the hot-account path only then.
 */
export async function driveQueuedBooking(
  ctx: Pick<AppContext, 'clock' | 'db' | 'tables' | 'logger' | 'config' | 'caches' | 'retry' | 'deadlines'>,
  queued: QueuedBookingRef,
): Promise<void> {
  const hotAccount = await import('./hot-account.js');
  await hotAccount.driveQueuedBooking(ctx, queued);
}

/** Stale reads under one booking before its account counts as contended. */
const STALE_READS_BEFORE_HOT = 2;
/** Attempts for stale reads while the account is not yet hot (the time bound of the policy still holds). */
const STALE_RETRIES = { maxAttempts: 20, maxDelayMs: 50 };

class StaleReadError extends Error {
  constructor() {
    super('an account read went stale');
    this.name = 'StaleReadError';
  }
}

function coldRetryReason(error: unknown): string | undefined {
  if (error instanceof StaleReadError) return 'stale';
  if (error instanceof KeptStateStaleError) return 'kept';
  return retryReason(error);
}

/**
 * Sends again a transaction whose answer was a throttling error the SDK gave up on (one of its attempts may
 * have committed unanswered). Its token makes a committed one answer success rather than apply twice; a
 * cancellation says it never committed, and the booking is planned afresh.
 */
async function committedOnResend(ctx: Pick<AppContext, 'db'>, unanswered: TransactWriteCommandInput): Promise<boolean> {
  try {
    await ctx.db.send(new TransactWriteCommand(unanswered));
    return true;
  } catch (error) {
    if (error instanceof TransactionCanceledException) return false;
    throw error;
  }
}

/**
 * The booking alone, in one transaction; or the account it found hot (then it goes to its queue).
 *
 * It books on the accounts' states this context kept from its last read or commit of them (`accountStates`),
 * when it kept every one, without reading them; else on a consistent read. Either way each account's update is
 * conditioned on the version booked on, so correctness never rests on the kept state: a stale one fails the
 * transaction, whose cancellation returns the account as it is (`ReturnValuesOnConditionCheckFailure`), and
 * the booking is tried again on that. Only a state read under this booking that went stale counts towards
 * marking the account hot (contention); a kept one going stale says only that another process booked on it.
 */
async function bookCold(
  ctx: Pick<AppContext, 'clock' | 'db' | 'tables' | 'logger' | 'retry' | 'caches'>,
  booking: Booking,
): Promise<AccountRead | undefined> {
  const stored = storedBooking(booking, { refusals: false });
  const wanted = readAccountsOf(booking.movement);
  const keys = [...new Set(wanted.map(({ account }) => accountKey(account)))];
  const inFlight = ctx.caches.bookingsInFlight;
  // Another booking of this context on one of the accounts: the kept state is about to go stale, read instead.
  const alone = keys.every((key) => (inFlight.get(key) ?? 0) === 0);
  for (const key of keys) inFlight.set(key, (inFlight.get(key) ?? 0) + 1);
  try {
    return await bookColdAttempts(ctx, booking, stored, wanted, alone ? keptReads(ctx, wanted) : undefined);
  } finally {
    for (const key of keys) {
      const left = (inFlight.get(key) ?? 1) - 1;
      if (left > 0) inFlight.set(key, left);
      else inFlight.delete(key);
    }
  }
}

/** `bookCold`'s attempts, the first on `kept` when given (the accounts' states this context kept). */
async function bookColdAttempts(
  ctx: Pick<AppContext, 'clock' | 'db' | 'tables' | 'logger' | 'retry' | 'caches'>,
  booking: Booking,
  stored: StoredBooking,
  wanted: ReturnType<typeof readAccountsOf>,
  kept: Map<string, AccountRead> | undefined,
): Promise<AccountRead | undefined> {
  let staleReads = 0;
  let unanswered: TransactWriteCommandInput | undefined;
  // What the next attempt books on (undefined: read the accounts), and which of those states were read under
  // this booking rather than kept from before.
  let known = kept;
  const readHere = new Set<string>();
  return withRetry(ctx, { what: 'booking', classify: coldRetryReason, reasons: COLD_RETRY_REASONS }, async () => {
    // Throttled again, it stays unanswered for the next attempt.
    if (unanswered) {
      if (await committedOnResend(ctx, unanswered)) {
        forgetAccounts(ctx, wanted);
        return undefined;
      }
      unanswered = undefined;
    }
    let reads = known;
    known = undefined;
    if (!reads) {
      reads = await readAccounts(ctx, wanted);
      keepReads(ctx, reads.values());
      for (const key of reads.keys()) readHere.add(key);
    }
    const nowMs = ctx.clock.nowMs();
    const hot = [...reads.values()].find((read) => read.platformCode !== null && read.hotUntilMs > nowMs);
    if (hot) return hot;
    const plan = planBatch([stored], reads, { queued: false, refuseUncovered: false });
    const transaction = batchTransaction(ctx, plan, reads, undefined, nowMs);
    const sent: TransactWriteCommandInput = {
      TransactItems: transaction.items.map((item, index) =>
        transaction.origins[index]?.kind === 'account' && item.Update
          ? { Update: { ...item.Update, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } }
          : item,
      ),
      ClientRequestToken: randomUUID(),
    };
    try {
      await ctx.db.send(new TransactWriteCommand(sent));
      keepCommitted(ctx, plan.planned[0], reads);
      return undefined;
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) {
        // Throttled past the SDK's own retries: whether an attempt committed is unknown; the next asks again.
        if (retryReason(error)) unanswered = sent;
        throw error;
      }
      const failure = firstFailure(error, transaction);
      if (!failure) {
        // Cancelled for conflicts or throttling only. A conflict on an account is contention too (on AWS a
        // transaction cancels the others in flight on its items).
        const contended = conflictedAccount(error, transaction, reads);
        if (contended && ++staleReads >= STALE_READS_BEFORE_HOT) return markHot(ctx, contended);
        throw error;
      }
      const origin = failure;
      if (origin.kind === 'item') throw booking.items[origin.index]?.onConditionFailed?.() ?? error;
      if (origin.kind === 'record') throw booking.onMovementRecorded?.() ?? error;
      if (origin.kind !== 'account') throw error;
      const read = reads.get(origin.key)!;
      const change = netChanges(booking.movement!.legs).find((entry) => accountKey(entry.account) === origin.key)!;
      // Escrow and fee accounts carry no version: their failed condition is their guard.
      if (read.platformCode === null) throw insufficientFunds(change.account, change.change);
      // A versioned account's condition failed: either another booking moved it since the state booked on
      // (stale), or that state was current and the debit is not covered. The cancellation carries each failed
      // account as it is; should it not, the account is read.
      const returned = returnedAccounts(error, transaction, reads);
      if (!returned.has(origin.key)) {
        const current = await readAccounts(ctx, [{ account: read.account, platformCode: read.platformCode }]);
        for (const [key, state] of current) returned.set(key, state);
      }
      const now = returned.get(origin.key);
      if (now?.version === read.version) throw insufficientFunds(change.account, change.change);
      keepReads(ctx, returned.values());
      const contended = readHere.has(origin.key);
      known = new Map([...reads, ...returned]);
      for (const key of returned.keys()) readHere.add(key);
      if (contended && ++staleReads >= STALE_READS_BEFORE_HOT) return markHot(ctx, read);
      throw contended ? new StaleReadError() : new KeptStateStaleError();
    }
  });
}

/** The retry budgets of the cold path's own reasons: a read gone stale (contention), a kept state gone stale (none). */
const COLD_RETRY_REASONS = {
  stale: STALE_RETRIES,
  // Not contention: another process booked since this one kept the state. Tried again at once on the state the
  // cancellation returned.
  kept: { maxAttempts: 20, baseDelayMs: 0, maxDelayMs: 0 },
};

/** A state this context kept went stale: the booking is tried again on the account as the cancellation returned it. */
class KeptStateStaleError extends Error {
  constructor() {
    super('a kept account state went stale');
    this.name = 'KeptStateStaleError';
  }
}

/** The accounts' states this context kept, as reads to book on, when it kept every one of them; else undefined. */
function keptReads(
  ctx: Pick<AppContext, 'caches'>,
  wanted: ReadonlyArray<{ account: AccountRef; platformCode: string | null }>,
): Map<string, AccountRead> | undefined {
  if (wanted.length === 0) return undefined;
  const reads = new Map<string, AccountRead>();
  for (const { account, platformCode } of wanted) {
    const key = accountKey(account);
    const kept = platformCode === null ? undefined : ctx.caches.accountStates.get(key);
    if (!kept) return undefined;
    reads.set(key, {
      account,
      platformCode,
      exists: true,
      balance: new Money(kept.balance),
      version: kept.version,
      hotUntilMs: kept.hotUntilMs,
    });
  }
  return reads;
}

/** Keeps the states of existing platform and customer accounts (the only ones booked on a version). */
function keepReads(ctx: Pick<AppContext, 'caches'>, reads: Iterable<AccountRead>): void {
  for (const read of reads)
    if (read.platformCode !== null && read.exists)
      keepLookup(ctx.caches.accountStates, accountKey(read.account), {
        balance: plain(read.balance),
        version: read.version,
        hotUntilMs: read.hotUntilMs,
      });
}

/** After a commit: each versioned account's balance and version just after the booking. */
function keepCommitted(
  ctx: Pick<AppContext, 'caches'>,
  planned: PlannedBooking | undefined,
  reads: ReadonlyMap<string, AccountRead>,
): void {
  if (planned?.outcome.kind !== 'booked') return;
  for (const [key, after] of planned.outcome.after) {
    const read = reads.get(key);
    if (read?.platformCode)
      keepLookup(ctx.caches.accountStates, key, {
        balance: plain(after.balance),
        version: after.version,
        hotUntilMs: read.hotUntilMs,
      });
  }
}

/** A commit whose answer was lost: the states after it are not known here, so none is kept. */
function forgetAccounts(
  ctx: Pick<AppContext, 'caches'>,
  wanted: ReadonlyArray<{ account: AccountRef; platformCode: string | null }>,
): void {
  for (const { account } of wanted) ctx.caches.accountStates.delete(accountKey(account));
}

/** The versioned accounts a cancelled transaction returned as they are (their update's condition failed). */
function returnedAccounts(
  error: TransactionCanceledException,
  transaction: BatchTransaction,
  reads: ReadonlyMap<string, AccountRead>,
): Map<string, AccountRead> {
  const returned = new Map<string, AccountRead>();
  for (const [index, reason] of (error.CancellationReasons ?? []).entries()) {
    const origin = transaction.origins[index];
    const item = documentItemOf(reason.Item);
    if (origin?.kind !== 'account' || reason.Code !== 'ConditionalCheckFailed' || !item) continue;
    const read = reads.get(origin.key);
    if (!read?.platformCode) continue;
    const stored = parseAccount(item);
    returned.set(origin.key, {
      account: read.account,
      platformCode: read.platformCode,
      exists: true,
      balance: new Money(stored.balance),
      version: stored.version,
      hotUntilMs: stored.hot_until_ms ?? 0,
    });
  }
  return returned;
}

function conflictedAccount(
  error: TransactionCanceledException,
  transaction: BatchTransaction,
  reads: ReadonlyMap<string, AccountRead>,
): AccountRead | undefined {
  const reasons = error.CancellationReasons ?? [];
  for (const [index, reason] of reasons.entries()) {
    const origin = transaction.origins[index];
    if (reason.Code === 'TransactionConflict' && origin?.kind === 'account') {
      const read = reads.get(origin.key);
      if (read?.platformCode) return read;
    }
  }
  return undefined;
}

/** Marks the account hot (without moving its version: bookings in flight are not disturbed) and returns it. */
async function markHot(
  ctx: Pick<AppContext, 'clock' | 'db' | 'tables' | 'logger' | 'caches'>,
  read: AccountRead,
): Promise<AccountRead> {
  const nowMs = ctx.clock.nowMs();
  await writtenUnlessConditionFailed(
    ctx.db.send(
      new UpdateCommand(
        accountEntity.update(ctx.tables, read.account, {
          update: 'SET hot_until_ms = :until',
          // Once per window: the bookings that find it contended at the same moment write it once between them.
          condition: 'attribute_exists(pk) AND (attribute_not_exists(hot_until_ms) OR hot_until_ms < :renew)',
          values: { ':until': nowMs + HOT_MARK_MS, ':renew': nowMs + HOT_MARK_MS / 2 },
        }).Update,
      ),
    ),
  );
  ctx.logger.info('account hot: its bookings queue for group commit', { account: accountKey(read.account) });
  // This context's next booking of the account goes to its queue without a transaction first.
  const kept = ctx.caches.accountStates.get(accountKey(read.account));
  if (kept) kept.hotUntilMs = nowMs + HOT_MARK_MS;
  return read;
}

/** How long one contended booking marks its account hot. */
const HOT_MARK_MS = 10_000;
/** Books one movement with the items that must commit with it (a booking built on the spot: ops, tests). */
export async function bookMovement(
  ctx: Pick<AppContext, 'clock' | 'db' | 'tables' | 'logger' | 'config' | 'caches' | 'retry' | 'deadlines'>,
  movement: Movement,
  alongWith: readonly TaggedItem[] = [],
  nowMs = ctx.clock.nowMs(),
): Promise<void> {
  await book(ctx, { id: newBookingId(nowMs), atMs: nowMs, movement, items: alongWith });
}
