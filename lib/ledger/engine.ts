import { randomUUID } from 'node:crypto';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, UpdateCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import type { AppContext } from '../context.js';
import type { QueuedBookingRef } from '../domain/errors.js';
import { accountKey, netChanges, type Movement } from '../domain/ledger.js';
import { accountEntity } from '../store/entities/ledger.js';
import { retryReason, withRetry } from '../store/table/retry.js';
import type { TaggedItem } from '../store/table/transaction-items.js';
import { insufficientFunds, newBookingId, settleItems, storedBooking, type Booking } from './booking.js';
import {
  batchTransaction,
  firstFailure,
  planBatch,
  readAccounts,
  readAccountsOf,
  type AccountRead,
  type BatchTransaction,
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
  // A claim its request makes with the booking can't wait in a queue (its request makes it apart, then books again).
  const ownTransactionOnly = settled.items.find((tagged) => tagged.notQueued);
  if (ownTransactionOnly?.notQueued) throw ownTransactionOnly.notQueued();
  // Loaded on a container's first contention: most never meet one, so their cold start doesn't compile it.
  const { bookHot } = await import('./hot-account.js');
  await bookHot(ctx, settled, hot);
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

/** The booking alone, in one transaction; or the account it found hot (then it goes to its queue). */
async function bookCold(
  ctx: Pick<AppContext, 'clock' | 'db' | 'tables' | 'logger' | 'retry'>,
  booking: Booking,
): Promise<AccountRead | undefined> {
  const stored = storedBooking(booking, { refusals: false });
  const wanted = readAccountsOf(booking.movement);
  let staleReads = 0;
  let unanswered: TransactWriteCommandInput | undefined;
  return withRetry(ctx, { what: 'booking', classify: coldRetryReason, reasons: { stale: STALE_RETRIES } }, async () => {
    // Throttled again, it stays unanswered for the next attempt.
    if (unanswered) {
      if (await committedOnResend(ctx, unanswered)) return undefined;
      unanswered = undefined;
    }
    const reads = await readAccounts(ctx, wanted);
    const nowMs = ctx.clock.nowMs();
    const hot = [...reads.values()].find((read) => read.platformCode !== null && read.hotUntilMs > nowMs);
    if (hot) return hot;
    const plan = planBatch([stored], reads, { queued: false, refuseUncovered: false });
    const transaction = batchTransaction(ctx, plan, reads, undefined, nowMs);
    const sent: TransactWriteCommandInput = { TransactItems: transaction.items, ClientRequestToken: randomUUID() };
    try {
      await ctx.db.send(new TransactWriteCommand(sent));
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
      // A versioned account's condition failed: either another booking moved it since the read (stale), or
      // the read was current and the debit is not covered.
      const now = (await readAccounts(ctx, [{ account: read.account, platformCode: read.platformCode }])).get(
        origin.key,
      );
      if (now?.version === read.version) throw insufficientFunds(change.account, change.change);
      if (++staleReads >= STALE_READS_BEFORE_HOT) return markHot(ctx, read);
      throw new StaleReadError();
    }
  });
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
  ctx: Pick<AppContext, 'clock' | 'db' | 'tables' | 'logger'>,
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
