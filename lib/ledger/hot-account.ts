import { randomInt, randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DeleteCommand, PutCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { AppContext, HotAccountTurns } from '../context.js';
import { BookingQueuedError, InsufficientFundsError, type QueuedBookingRef } from '../domain/errors.js';
import { accountKey } from '../domain/ledger.js';
import { type BookingResult } from '../domain/group-commit.js';
import { bookingLeaseEntity, bookingResultEntity, queuedBookingEntity } from '../store/entities/booking-queue.js';
import { retryReason } from '../store/table/retry.js';
import { writtenUnlessConditionFailed } from '../store/table/conditional.js';
import type { TransactItem } from '../store/table/transaction-items.js';
import { DeadlineExceededError } from '../runtime/deadline.js';
import {
  decodeBooking,
  encodeBooking,
  errorOfRefusal,
  movementOf,
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
  type OriginItem,
  type QueueAnswers,
} from './batch.js';

/**
 * Hot accounts: group commit (lib/ledger/README.md). A booking whose account the cold path found contended
 * (lib/ledger/engine.ts) is queued under it; whoever holds the account's lease commits the queue in order, many
 * bookings per transaction, and each request waits for its own result (flat combining: every waiting request is
 * a candidate committer, so there is no worker to run or to lose).
 *
 * The engine loads this module with `import()` when a booking first meets a hot account (or a retry finds its
 * booking still queued): most containers never do, so their cold start does not compile it.
 */

/** Where a batch's queued bookings sit, and how long their results are kept. */
export interface QueueKeys {
  /** The hot account (`accountKey`) whose queue holds the bookings. */
  account: string;
  /** The queue shard holding each booking's entry, where its result goes too. */
  shardOf: (bookingId: string) => number;
  resultTtlSeconds: number;
  resultExpiresAtMs: number;
}

/** A committer's lease: long enough for one round, short enough that a dead committer is replaced quickly. */
const LEASE_MS = 2_000;
/** A bound for a timer on the turn ahead when the wait has none of its own (setTimeout's limit is 2^31 - 1 ms). */
const MAX_TURN_WAIT_MS = 2 ** 31 - 1;
/** Bookings one round looks at (a transaction takes fewer: it stops at 100 items). */
const ROUND_READ = 40;
/** How long a queue entry and its result are kept: far past any wait, and a retry's window to find its result. */
const QUEUE_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * Shards of an account's queue. A queued booking is written (about 3 KB: 3 write units), deleted in its
 * batch's transaction (6) and answered (2): about 11 write units, so one partition (1,000 a second) would
 * hold an account to about 90 bookings a second on AWS; 4 shards lift that to about 360, above what the
 * committer's rounds reach (lib/store/README.md, "Hot accounts"). A round queries them all at once.
 */
const QUEUE_SHARDS = 4;

/** The booking queued under its hot account; commits it (and whatever else is queued) or waits for its result. */
export async function bookHot(
  ctx: Pick<AppContext, 'clock' | 'db' | 'tables' | 'logger' | 'config' | 'caches' | 'retry' | 'deadlines'>,
  booking: Booking,
  hot: AccountRead,
): Promise<void> {
  const account = accountKey(hot.account);
  const shard = randomInt(QUEUE_SHARDS);
  const pk = queuedBookingEntity.partitionKey({ account_key: account, shard });
  const nowMs = ctx.clock.nowMs();
  await ctx.db.send(
    new PutCommand(
      queuedBookingEntity.put(
        ctx.tables,
        {
          booking: encodeBooking(storedBooking(booking)),
          queued_at: nowMs,
          ttl: Math.ceil((nowMs + QUEUE_RETENTION_MS) / 1000),
        },
        {
          extra: { account_key: account, shard, booking_id: booking.id },
          // The same booking can't be queued twice.
          condition: 'attribute_not_exists(pk)',
        },
      ).Put,
    ),
  );
  const queued = { account, queuePk: pk, bookingId: booking.id };
  const result = await waitForResult(ctx, queued, (error) => {
    throw stillQueued(ctx, queued, error);
  });
  if (!result) throw new BookingQueuedError(queued);
  settle(booking, result);
}

/**
 * Takes turns on the booking's account until a round has its result, or the wait bound passes (undefined).
 * A turn that throws ends the wait with what `onTurnFailed` returns.
 */
async function waitForResult(
  ctx: Pick<AppContext, 'clock' | 'db' | 'tables' | 'logger' | 'config' | 'caches' | 'retry' | 'deadlines'>,
  queued: QueuedBookingRef,
  onTurnFailed: (error: unknown) => undefined,
): Promise<BookingResult | undefined> {
  const base = bookingLeaseEntity.partitionKey({ account_key: queued.account });
  const turns = turnsOf(ctx, base);
  turns.waiting += 1;
  const { timing } = ctx.retry;
  // The wait's own bound, or the invocation's deadline if sooner: a request that must stop answers 503 with its
  // booking still queued, and a retry with its X-Request-Id finds the outcome.
  const deadline = timing.elapsedMs() + Math.min(ctx.config.HOT_ACCOUNT_WAIT_MS, ctx.deadlines.remainingMs());
  const queue = { account: queued.account, base, pk: queued.queuePk };
  try {
    for (let pause = 2; ; pause = Math.min(pause * 2, 40)) {
      const turnWithinMs = deadline - timing.elapsedMs();
      const result = await takeTurn(ctx, turns, queue, queued.bookingId, turnWithinMs).catch(onTurnFailed);
      if (result) return result;
      if (timing.elapsedMs() > deadline) return undefined;
      await timing.sleep(pause / 2 + timing.random() * pause);
    }
  } finally {
    turns.waiting -= 1;
    if (turns.waiting === 0) ctx.caches.hotAccounts.delete(base);
  }
}

/**
 * A retry of a request whose booking was left queued (its first run answered 503): it commits the account's
 * queue itself, as a waiting request does, until the booking has its result or the wait bound passes. Without
 * it a queued booking would wait for the account's next booking, which may never come once its traffic stops.
 * The retry then reads the request's outcome from its idempotency record (stored, or freed by a refusal).
 */
export async function driveQueuedBooking(
  ctx: Pick<AppContext, 'clock' | 'db' | 'tables' | 'logger' | 'config' | 'caches' | 'retry' | 'deadlines'>,
  queued: QueuedBookingRef,
): Promise<void> {
  await waitForResult(ctx, queued, (error) => {
    stillQueued(ctx, queued, error);
    return undefined;
  });
}

/**
 * A turn that failed (DynamoDB throttling past the SDK's retries, a round's transaction in doubt) leaves the
 * booking queued: another committer books or refuses it, and its request's id stays in progress for the
 * retry to find that outcome. So the request hears what the wait bound answers, never a 500 or a release
 * of its id.
 */
function stillQueued(ctx: Pick<AppContext, 'logger'>, queued: QueuedBookingRef, error: unknown): BookingQueuedError {
  // Out of time or busy: expected under load; anything else is worth an error line.
  const log = retryReason(error) || error instanceof DeadlineExceededError ? ctx.logger.warn : ctx.logger.error;
  log.call(ctx.logger, 'hot account: a turn failed; the booking stays queued', { account: queued.account, error });
  return new BookingQueuedError(queued);
}

function turnsOf(ctx: Pick<AppContext, 'caches'>, pk: string): HotAccountTurns {
  let turns = ctx.caches.hotAccounts.get(pk);
  if (!turns) {
    turns = { turn: Promise.resolve(), waiting: 0, results: new Map() };
    ctx.caches.hotAccounts.set(pk, turns);
  }
  return turns;
}

/** The requester's answer from its booking's result: nothing when booked, its own error when refused. */
function settle(booking: Booking, result: BookingResult): void {
  if (result.outcome === 'booked') return;
  if (result.item !== undefined) {
    const own = booking.items[result.item]?.onConditionFailed;
    throw own ? own() : errorOfRefusal(result.refusal!);
  }
  if (result.movementRecorded) throw booking.onMovementRecorded?.() ?? errorOfRefusal(result.refusal!);
  throw new InsufficientFundsError(result.refusal?.errors[0]);
}

/**
 * One turn of this process's waiters on the account, one at a time (the others wait for it rather than ask
 * DynamoDB too): the result if a round has produced it; else, when the lease is free, a round of commits.
 */
async function takeTurn(
  ctx: Pick<AppContext, 'clock' | 'db' | 'tables' | 'logger' | 'retry'>,
  turns: HotAccountTurns,
  queue: { account: string; base: string; pk: string },
  bookingId: string,
  withinMs: number,
): Promise<BookingResult | undefined> {
  const { pk } = queue;
  const previous = turns.turn;
  let done!: () => void;
  turns.turn = new Promise<void>((resolve) => (done = resolve));
  // A waiter whose time runs out before the turn ahead ends gives up its own: the next waiter's turn then
  // follows that one, and this booking stays queued for a round to commit.
  if (!(await settlesWithin(previous, withinMs))) {
    void previous.then(done);
    return undefined;
  }
  try {
    const local = turns.results.get(bookingId);
    if (local) return local;
    const table = ctx.tables.main;
    // The result sits in the booking's queue shard (`pk`), the lease in the account's partition.
    const resultKey = { pk, sk: bookingResultEntity.sortKeyPrefix({ booking_id: bookingId }) };
    const leaseKey = bookingLeaseEntity.key({ account_key: queue.account });
    const out = await ctx.db.send(
      new BatchGetCommand({ RequestItems: { [table]: { Keys: [resultKey, leaseKey], ConsistentRead: true } } }),
    );
    const items = out.Responses?.[table] ?? [];
    const stored = items.find((item) => item.sk === resultKey.sk);
    if (stored) return JSON.parse(bookingResultEntity.parse(stored).result) as BookingResult;
    const leaseItem = items.find((item) => item.sk === leaseKey.sk);
    const nowMs = ctx.clock.nowMs();
    if (leaseItem && bookingLeaseEntity.parse(leaseItem).until_ms > nowMs) return undefined;
    const owner = randomUUID();
    if (!(await acquireLease(ctx, queue.account, owner, nowMs))) return undefined;
    try {
      await commitRound(ctx, queue.account, turns);
    } finally {
      await releaseLease(ctx, queue.account, owner);
    }
    return turns.results.get(bookingId);
  } finally {
    turns.results.delete(bookingId);
    done();
  }
}

/** Whether `turn` ends within `ms`. */
async function settlesWithin(turn: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, Math.min(ms, MAX_TURN_WAIT_MS)));
  });
  try {
    return await Promise.race([turn.then(() => true), expired]);
  } finally {
    clearTimeout(timer);
  }
}

async function acquireLease(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  account: string,
  owner: string,
  nowMs: number,
): Promise<boolean> {
  try {
    await ctx.db.send(
      new PutCommand(
        bookingLeaseEntity.put(
          ctx.tables,
          { owner, until_ms: nowMs + LEASE_MS, ttl: Math.ceil((nowMs + QUEUE_RETENTION_MS) / 1000) },
          {
            extra: { account_key: account },
            condition: 'attribute_not_exists(pk) OR until_ms <= :now',
            values: { ':now': nowMs },
          },
        ).Put,
      ),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException || retryReason(error)) return false;
    throw error;
  }
}

async function releaseLease(ctx: Pick<AppContext, 'db' | 'tables'>, account: string, owner: string): Promise<void> {
  // Lost to expiry and taken over: the next committer's lease is not ours to remove.
  await writtenUnlessConditionFailed(
    ctx.db.send(
      new DeleteCommand(
        bookingLeaseEntity.delete(
          ctx.tables,
          { account_key: account },
          { condition: '#owner = :owner', names: { '#owner': 'owner' }, values: { ':owner': owner } },
        ).Delete,
      ),
    ),
  );
}

/**
 * One round of the committer: the queue's bookings in order from one consistent read of their accounts,
 * those a guarded debit can't cover refused, the rest committed in one transaction with each booking's
 * result. A transaction that fails leaves everything as it was: a stale account (a cold booking got in
 * between) or another committer's work is simply read again next round; a booking whose own condition failed
 * (a client id taken, a participant locked) is refused alone and the others go next round.
 */
async function commitRound(
  ctx: Pick<AppContext, 'clock' | 'db' | 'tables' | 'logger' | 'retry'>,
  account: string,
  turns: HotAccountTurns,
): Promise<void> {
  const shards = await Promise.all(
    Array.from({ length: QUEUE_SHARDS }, async (_, shard) => {
      const out = await ctx.db.send(
        new QueryCommand({
          ...queuedBookingEntity.query(
            ctx.tables,
            'table',
            queuedBookingEntity.partitionKey({ account_key: account, shard }),
            { beginsWith: queuedBookingEntity.sortKeyPrefix({}) },
          ),
          ConsistentRead: true,
          Limit: ROUND_READ,
        }),
      );
      return (out.Items ?? []).map((item) => ({ shard, queued: queuedBookingEntity.parse(item) }));
    }),
  );
  // Arrival order across the shards: booking ids sort by time.
  const queued = shards
    .flat()
    .map(({ shard, queued: entry }) => ({ shard, booking: decodeBooking(entry.booking) }))
    .sort((a, b) => a.booking.id.localeCompare(b.booking.id))
    .slice(0, ROUND_READ);
  if (queued.length === 0) return;
  const bookings: StoredBooking[] = queued.map((entry) => entry.booking);
  const shardOf = new Map(queued.map((entry) => [entry.booking.id, entry.shard]));
  const wanted = bookings.flatMap((stored) => readAccountsOf(movementOf(stored)));
  const reads = await readAccounts(ctx, wanted);
  const nowMs = ctx.clock.nowMs();
  const queue: QueueKeys = {
    account,
    shardOf: (bookingId) => shardOf.get(bookingId)!,
    resultExpiresAtMs: nowMs + QUEUE_RETENTION_MS,
    resultTtlSeconds: Math.ceil((nowMs + QUEUE_RETENTION_MS) / 1000),
  };
  const plan = planBatch(bookings, reads, { queued: true, refuseUncovered: true });
  const transaction = batchTransaction(ctx, plan, reads, queueAnswers(ctx, queue), nowMs);
  try {
    await ctx.db.send(new TransactWriteCommand({ TransactItems: transaction.items, ClientRequestToken: randomUUID() }));
  } catch (error) {
    if (!(error instanceof TransactionCanceledException)) {
      if (retryReason(error)) return;
      throw error;
    }
    const failure = firstFailure(error, transaction);
    if (failure && (failure.kind === 'item' || failure.kind === 'record')) {
      const stored = bookings[failure.booking]!;
      const result: BookingResult =
        failure.kind === 'item'
          ? {
              outcome: 'refused',
              item: failure.index,
              refusal: stored.items[failure.index]?.refusal ?? { status: 409, errors: ['conflict'] },
            }
          : {
              outcome: 'refused',
              movementRecorded: true,
              refusal: stored.movementRefusal ?? { status: 409, errors: ['movement already booked'] },
            };
      await refuseAlone(ctx, queue, stored, result, turns);
    }
    return;
  }
  for (const entry of plan.planned) {
    const result: BookingResult =
      entry.outcome.kind === 'booked' ? { outcome: 'booked' } : { outcome: 'refused', refusal: entry.outcome.refusal };
    turns.results.set(entry.booking.id, result);
    if (result.outcome === 'refused') await releaseClaims(ctx, entry.booking);
  }
  if (plan.planned.length > 1) ctx.logger.debug('group commit', { account, bookings: plan.planned.length });
}

/** A booking refused for its own reason: its result stored and its queue entry removed, in one transaction. */
async function refuseAlone(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  queue: QueueKeys,
  stored: StoredBooking,
  result: BookingResult,
  turns: HotAccountTurns,
): Promise<void> {
  try {
    await ctx.db.send(
      new TransactWriteCommand({
        TransactItems: [queueDelete(ctx, queue, stored.id), resultPut(ctx, queue, stored.id, result)],
      }),
    );
  } catch (error) {
    // Answered meanwhile by another committer, or a conflict: the next round sees.
    if (error instanceof TransactionCanceledException || retryReason(error)) return;
    throw error;
  }
  turns.results.set(stored.id, result);
  await releaseClaims(ctx, stored);
}

/**
 * A refused booking frees its request's id (as a failed request does), so the client's retry runs again;
 * conditioned on the run still owning it, so nothing another run holds is touched.
 */
async function releaseClaims(ctx: Pick<AppContext, 'db'>, stored: StoredBooking): Promise<void> {
  for (const entry of stored.items) {
    if (!entry.release) continue;
    await writtenUnlessConditionFailed(ctx.db.send(new DeleteCommand(entry.release)));
  }
}

/**
 * Every planned booking's answer on the hot path, booked or refused: its queue entry removed, its result stored
 * (`batchTransaction`'s `answers`).
 */
export function queueAnswers(ctx: Pick<AppContext, 'tables'>, queue: QueueKeys): QueueAnswers {
  return (planned) =>
    planned.flatMap((entry): OriginItem[] => {
      const result: BookingResult =
        entry.outcome.kind === 'booked'
          ? { outcome: 'booked' }
          : { outcome: 'refused', refusal: entry.outcome.refusal };
      return [
        {
          item: queueDelete(ctx, queue, entry.booking.id),
          origin: { kind: 'queue', booking: entry.position },
        },
        { item: resultPut(ctx, queue, entry.booking.id, result), origin: { kind: 'other' } },
      ];
    });
}

/** A queued booking's entry and result: where they are. */
function queuedParts(queue: QueueKeys, bookingId: string) {
  return { account_key: queue.account, shard: queue.shardOf(bookingId), booking_id: bookingId };
}

/** The entry of a queued booking, removed by the transaction that answers it (so it is answered once). */
export function queueDelete(ctx: Pick<AppContext, 'tables'>, queue: QueueKeys, bookingId: string): TransactItem {
  return queuedBookingEntity.delete(ctx.tables, queuedParts(queue, bookingId), {
    condition: 'attribute_exists(pk)',
  });
}

export function resultPut(
  ctx: Pick<AppContext, 'tables'>,
  queue: QueueKeys,
  bookingId: string,
  result: BookingResult,
): TransactItem {
  return bookingResultEntity.put(
    ctx.tables,
    { result: JSON.stringify(result), expires_at_ms: queue.resultExpiresAtMs, ttl: queue.resultTtlSeconds },
    { extra: queuedParts(queue, bookingId), condition: 'attribute_not_exists(pk)' },
  );
}
