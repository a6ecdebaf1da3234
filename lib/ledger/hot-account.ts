import { randomInt, randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import type { AppContext, HotAccountTenure, HotAccountTurns, LocalQueued, QueuedEntry } from '../context.js';
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
  failedItems,
  firstFailure,
  planBatch,
  readAccounts,
  readAccountsOf,
  type AccountRead,
  type ItemOrigin,
  type OriginItem,
  type PlannedBooking,
  type QueueAnswers,
} from './batch.js';

/**
 * Hot accounts: group commit (lib/ledger/README.md). A booking whose account the cold path found contended
 * (lib/ledger/engine.ts) is queued under it; whoever holds the account's lease commits the queue in order, many
 * bookings per transaction, and each request waits for its own result (flat combining: every waiting request is
 * a candidate committer, so there is no worker to run or to lose).
 *
 * The engine loads this module with `import()` when a booking first meets a hot account (or a retry finds its
 * booking still queued): most containers never do, so their cold start does not compile it. Nothing imports it
 * statically: esbuild would then put it in the static chunk, dynamic import or not.
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

/**
 * A committer's lease: long enough for a round, short enough that a dead committer is replaced quickly. Each
 * round's transaction renews it, so a tenure lasts as long as its rounds keep committing.
 */
const LEASE_MS = 2_000;
/** A bound for a timer on the turn ahead when the wait has none of its own (setTimeout's limit is 2^31 - 1 ms). */
const MAX_TURN_WAIT_MS = 2 ** 31 - 1;
/** Bookings one round looks at, and one read of a shard returns (a transaction takes fewer: it stops at 100 items). */
const ROUND_READ = 40;
/** How long a queue entry and its result are kept: far past any wait, and a retry's window to find its result. */
const QUEUE_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * Shards of an account's queue. A queued booking is written (about 3 KB: 3 write units), deleted in its
 * batch's transaction (6) and answered (2): about 11 write units, so one partition (1,000 a second) would
 * hold an account to about 90 bookings a second on AWS; 8 shards lift that to about 720, above what the
 * rounds reach (lib/store/README.md, "Hot accounts"). A tenure's first round reads them all at once; each round
 * after it reads one, in turn, alongside its transaction.
 */
export const QUEUE_SHARDS = 8;

type HotContext = Pick<AppContext, 'clock' | 'db' | 'tables' | 'logger' | 'config' | 'caches' | 'retry' | 'deadlines'>;

/** The booking queued under its hot account; commits it (and whatever else is queued) or waits for its result. */
export async function bookHot(ctx: HotContext, booking: Booking, hot: AccountRead): Promise<void> {
  const account = accountKey(hot.account);
  const shard = randomInt(QUEUE_SHARDS);
  const pk = queuedBookingEntity.partitionKey({ account_key: account, shard });
  const nowMs = ctx.clock.nowMs();
  const encoded = encodeBooking(storedBooking(booking));
  try {
    await ctx.db.send(
      new PutCommand(
        queuedBookingEntity.put(
          ctx.tables,
          { booking: encoded, queued_at: nowMs, ttl: Math.ceil((nowMs + QUEUE_RETENTION_MS) / 1000) },
          {
            extra: { account_key: account, shard, booking_id: booking.id },
            // The same booking can't be queued twice.
            condition: 'attribute_not_exists(pk)',
          },
        ).Put,
      ),
    );
  } catch (error) {
    // The entry is there already: the SDK sent the put again after an attempt whose answer was lost (a timeout)
    // had written it. Nothing else queues this booking (its id is new, and a retry of the request drives the
    // queue without queueing), so it is this booking's, queued once.
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
  const queued = { account, queuePk: pk, bookingId: booking.id };
  const local = { shard, entry: { id: booking.id, queuedAtMs: nowMs, booking: encoded } };
  const result = await waitForResult(
    ctx,
    queued,
    nowMs,
    (error) => {
      throw stillQueued(ctx, queued, error);
    },
    local,
  );
  if (!result) throw new BookingQueuedError(queued);
  settle(booking, result);
}

/**
 * Takes turns on the booking's account until a round has its result, or the wait bound passes (undefined).
 * A turn that throws ends the wait with what `onTurnFailed` returns. `queuedAtMs`: when its queueing began (0
 * when unknown). `local`: the booking's queue entry as this request put it, which this process's rounds take
 * without reading its shard. A request whose round answered it while its process holds the lease, alone, keeps
 * committing until its tenure has answered what was queued before it began (flat combining: the queue is
 * drained by whoever is there, and nothing waits for traffic that may never come).
 */
async function waitForResult(
  ctx: HotContext,
  queued: QueuedBookingRef,
  queuedAtMs: number,
  onTurnFailed: (error: unknown) => undefined,
  local?: LocalQueued,
): Promise<BookingResult | undefined> {
  const base = bookingLeaseEntity.partitionKey({ account_key: queued.account });
  const turns = turnsOf(ctx, base);
  turns.waiting += 1;
  turns.waitingFor.set(queued.bookingId, queuedAtMs);
  let wake!: () => void;
  const answered = new Promise<void>((resolve) => (wake = resolve));
  turns.wake.set(queued.bookingId, wake);
  const { timing } = ctx.retry;
  // The wait's own bound, or the invocation's deadline if sooner: a request that must stop answers 503 with its
  // booking still queued, and a retry with its X-Request-Id finds the outcome.
  const deadline = timing.elapsedMs() + Math.min(ctx.config.HOT_ACCOUNT_WAIT_MS, ctx.deadlines.remainingMs());
  const queue = { account: queued.account, base, pk: queued.queuePk };
  const waiter: Waiter = { bookingId: queued.bookingId, queuedAtMs, polledIn: undefined, answered };
  if (local) turns.local.set(queued.bookingId, local);
  let own: BookingResult | undefined;
  try {
    for (let pause = 2; ; pause = Math.min(pause * 2, 40)) {
      // Answered by a round of this process while it waited: no turn needed to learn it.
      own ??= takeResult(turns, queued.bookingId);
      // Answered: it stays on only as its process's last committer with a tenure still owing answers.
      if (own && (!turns.tenure || turns.waiting > 1)) return own;
      const turnWithinMs = deadline - timing.elapsedMs();
      const turn = await takeTurn(ctx, turns, queue, own ? undefined : waiter, turnWithinMs).catch(
        (error: unknown): Turn => {
          // Already answered: a round it ran for the others failing changes nothing of its own.
          if (own) return { again: false, stop: true };
          onTurnFailed(error);
          return { again: false };
        },
      );
      own ??= turn.result;
      if (own && (turn.stop || !turns.tenure || turns.waiting > 1)) return own;
      if (timing.elapsedMs() > deadline) return own;
      if (turn.again) {
        pause = 1;
        continue;
      }
      // A pause before the next turn, cut short when a round of this process answers it.
      const sleep = timing.sleep(pause / 2 + timing.random() * pause);
      await (own ? sleep : Promise.race([sleep, answered]));
    }
  } finally {
    turns.waiting -= 1;
    turns.waitingFor.delete(queued.bookingId);
    turns.local.delete(queued.bookingId);
    turns.wake.delete(queued.bookingId);
    turns.results.delete(queued.bookingId);
    if (turns.waiting === 0) {
      // The last waiter of this process goes: a tenure still held is given back for the next committer.
      const tenure = turns.tenure;
      turns.tenure = undefined;
      // Kept (one entry per account this container found hot) while its last round gave the lease back: the
      // account's next request here takes the lease without reading it first.
      if (!turns.releasedLast) ctx.caches.hotAccounts.delete(base);
      if (tenure) await releaseLease(ctx, queued.account, tenure.owner).catch(() => undefined);
    }
  }
}

/** The booking's result, if a round of this process has answered it (taken: it is handed over once). */
function takeResult(turns: HotAccountTurns, bookingId: string): BookingResult | undefined {
  const result = turns.results.get(bookingId);
  if (result) turns.results.delete(bookingId);
  return result;
}

/** A waiting request, as its turns see it. */
interface Waiter {
  bookingId: string;
  queuedAtMs: number;
  /** The tenure (`pollMark`) under which it last read its result from DynamoDB. */
  polledIn: string | undefined;
  /** Settles when a round of this process has answered the booking. */
  answered: Promise<void>;
}

/** What one turn gave: the waiter's result, whether to take the next turn at once, whether to stop. */
interface Turn {
  result?: BookingResult;
  again: boolean;
  stop?: boolean;
}

/**
 * A retry of a request whose booking was left queued (its first run answered 503): it commits the account's
 * queue itself, as a waiting request does, until the booking has its result or the wait bound passes. Without
 * it a queued booking would wait for the account's next booking, which may never come once its traffic stops.
 * The retry then reads the request's outcome from its idempotency record (stored, or freed by a refusal).
 */
export async function driveQueuedBooking(ctx: HotContext, queued: QueuedBookingRef): Promise<void> {
  await waitForResult(ctx, queued, 0, (error) => {
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
    turns = {
      turn: Promise.resolve(),
      waiting: 0,
      results: new Map(),
      waitingFor: new Map(),
      local: new Map(),
      wake: new Map(),
    };
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
 * DynamoDB too): the result if a round has produced it; else a round of commits, when this process holds the
 * lease or takes it. A waiter reads its result from DynamoDB (with the lease, in one BatchGetItem) when its
 * process holds no lease, or once in a tenure that began after its booking was queued (another committer may
 * have answered it before); a tenure's own answers it finds here. `waiter` undefined: a round only.
 */
async function takeTurn(
  ctx: Pick<AppContext, 'clock' | 'db' | 'tables' | 'logger' | 'retry'>,
  turns: HotAccountTurns,
  queue: { account: string; base: string; pk: string },
  waiter: Waiter | undefined,
  withinMs: number,
): Promise<Turn> {
  const previous = turns.turn;
  let done!: () => void;
  turns.turn = new Promise<void>((resolve) => (done = resolve));
  // A waiter whose time runs out before the turn ahead ends gives up its own: the next waiter's turn then
  // follows that one, and this booking stays queued for a round to commit. One that a round answers meanwhile
  // takes its result and gives up its turn the same way.
  const ahead = await settlesWithin(previous, withinMs, waiter?.answered);
  if (ahead !== 'turn') {
    void previous.then(done);
    return { result: waiter && takeResult(turns, waiter.bookingId), again: false };
  }
  try {
    if (waiter) {
      const local = takeResult(turns, waiter.bookingId);
      if (local) return { result: local, again: false };
    }
    // A tenure whose lease lapsed goes on: its next transaction, conditioned on the owner, says whether another
    // took it. A booking queued before the tenure began that its view does not hold may have been answered by
    // another committer: its waiter reads its result once.
    let tenure = turns.tenure;
    if (!tenure && turns.releasedLast && waiter && turns.local.has(waiter.bookingId)) {
      // This process gave the lease back in its last round, and its requests queued bookings since: the lease is
      // most likely free, so it is taken without reading it first. A booking another committer answered
      // meanwhile fails the round on its queue entry's condition, and its request then reads its result.
      turns.releasedLast = false;
      tenure = await acquireLease(ctx, queue.account);
      if (tenure) turns.tenure = tenure;
    }
    const mayBeAnsweredElsewhere =
      waiter !== undefined &&
      waiter.polledIn !== pollMark(tenure) &&
      (!tenure ||
        !turns.waitingFor.has(waiter.bookingId) ||
        (waiter.queuedAtMs <= tenure.startedMs &&
          !inView(tenure, waiter.bookingId) &&
          !turns.local.has(waiter.bookingId)));
    if (!tenure || mayBeAnsweredElsewhere) {
      const polled = await pollResult(ctx, queue, waiter);
      if (polled.result) return { result: polled.result, again: false };
      if (tenure && polled.leaseOwner !== tenure.owner) tenure = turns.tenure = undefined;
      if (!tenure) {
        if (polled.leaseHeld) return { again: false };
        tenure = await acquireLease(ctx, queue.account);
        if (!tenure) return { again: false };
        turns.tenure = tenure;
      }
      if (waiter) waiter.polledIn = pollMark(tenure);
    }
    try {
      const again = await commitRound(ctx, queue.account, turns, tenure);
      return { result: waiter && takeResult(turns, waiter.bookingId), again };
    } catch (error) {
      // A round whose outcome is unknown (the process failing under it): the lease is given back, and whoever
      // takes it next reads the queue afresh.
      if (turns.tenure === tenure) turns.tenure = undefined;
      await releaseLease(ctx, queue.account, tenure.owner).catch(() => undefined);
      throw error;
    }
  } finally {
    done();
  }
}

/** What a waiter's read of its result was made under: the tenure, as of its start (a rebuilt view starts anew). */
function pollMark(tenure: HotAccountTenure | undefined): string | undefined {
  return tenure && `${tenure.owner}@${tenure.startedMs}`;
}

/** Whether the tenure's view of the queue holds the booking (then it is unanswered, and only this tenure answers it). */
function inView(tenure: HotAccountTenure, bookingId: string): boolean {
  for (const entries of tenure.queued.values()) if (entries.some((entry) => entry.id === bookingId)) return true;
  return false;
}

/** The waiter's stored result and the account's lease, in one consistent BatchGetItem (the lease alone without a waiter). */
async function pollResult(
  ctx: Pick<AppContext, 'clock' | 'db' | 'tables'>,
  queue: { account: string; pk: string },
  waiter: Waiter | undefined,
): Promise<{ result?: BookingResult; leaseHeld: boolean; leaseOwner?: string }> {
  const table = ctx.tables.main;
  // The result sits in the booking's queue shard (`pk`), the lease in the account's partition.
  const resultKey = waiter && { pk: queue.pk, sk: bookingResultEntity.sortKeyPrefix({ booking_id: waiter.bookingId }) };
  const leaseKey = bookingLeaseEntity.key({ account_key: queue.account });
  const out = await ctx.db.send(
    new BatchGetCommand({
      RequestItems: { [table]: { Keys: resultKey ? [resultKey, leaseKey] : [leaseKey], ConsistentRead: true } },
    }),
  );
  const items = out.Responses?.[table] ?? [];
  const stored = resultKey && items.find((item) => item.sk === resultKey.sk);
  if (stored) return { result: JSON.parse(bookingResultEntity.parse(stored).result) as BookingResult, leaseHeld: true };
  const leaseItem = items.find((item) => item.sk === leaseKey.sk);
  if (!leaseItem) return { leaseHeld: false };
  const lease = bookingLeaseEntity.parse(leaseItem);
  return { leaseHeld: lease.until_ms > ctx.clock.nowMs(), leaseOwner: lease.owner };
}

/** Whichever comes first: `turn` ends, `answered` settles, or `ms` pass. */
async function settlesWithin(
  turn: Promise<void>,
  ms: number,
  answered?: Promise<void>,
): Promise<'turn' | 'answered' | 'expired'> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(() => resolve('expired'), Math.max(0, Math.min(ms, MAX_TURN_WAIT_MS)));
  });
  try {
    return await Promise.race([
      turn.then(() => 'turn' as const),
      expired,
      ...(answered ? [answered.then(() => 'answered' as const)] : []),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Takes the account's lease when it is free or lapsed: a new tenure, or undefined when another holds it. */
async function acquireLease(
  ctx: Pick<AppContext, 'clock' | 'db' | 'tables'>,
  account: string,
): Promise<HotAccountTenure | undefined> {
  const owner = randomUUID();
  const nowMs = ctx.clock.nowMs();
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
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException || retryReason(error)) return undefined;
    throw error;
  }
  return {
    owner,
    // Read after the put answered: a booking queued later can only be answered by this tenure.
    startedMs: ctx.clock.nowMs(),
    untilMs: nowMs + LEASE_MS,
    queued: new Map(),
    fullShards: new Map(),
    nextShard: 0,
    readAll: true,
    prefetched: false,
    contended: new Set(),
    contendedTurn: false,
    failedRounds: 0,
  };
}

async function releaseLease(ctx: Pick<AppContext, 'db' | 'tables'>, account: string, owner: string): Promise<void> {
  // Lost to expiry and taken over: the next committer's lease is not ours to remove.
  await writtenUnlessConditionFailed(ctx.db.send(new DeleteCommand(leaseRelease(ctx, account, owner).Delete!)));
}

/** The lease given back: deleted, conditioned on its owner still being this tenure. */
function leaseRelease(ctx: Pick<AppContext, 'tables'>, account: string, owner: string): TransactItem {
  return bookingLeaseEntity.delete(
    ctx.tables,
    { account_key: account },
    { condition: '#owner = :owner', names: { '#owner': 'owner' }, values: { ':owner': owner } },
  );
}

/** The lease held on: its expiry moved on, conditioned on its owner still being this tenure. */
function leaseRenewal(ctx: Pick<AppContext, 'tables'>, account: string, owner: string, untilMs: number): TransactItem {
  const { Update } = bookingLeaseEntity.update(
    ctx.tables,
    { account_key: account },
    {
      update: 'SET until_ms = :until',
      condition: '#owner = :owner',
      names: { '#owner': 'owner' },
      values: { ':owner': owner, ':until': untilMs },
    },
  );
  // The entity's Update is the command's input, whose expression is optional; a transaction's needs it.
  return { Update: { ...Update, UpdateExpression: 'SET until_ms = :until' } };
}

/** One shard's oldest entries, as one read found them, and whether more wait behind them. */
interface ShardRead {
  shard: number;
  entries: QueuedEntry[];
  more: boolean;
}

/** The oldest `ROUND_READ` entries of each of the shards, in consistent reads side by side. */
async function readShards(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  account: string,
  shards: readonly number[],
): Promise<ShardRead[]> {
  const queuedPrefix = queuedBookingEntity.sortKeyPrefix({});
  return Promise.all(
    shards.map(async (shard) => {
      const out = await ctx.db.send(
        new QueryCommand({
          ...queuedBookingEntity.query(
            ctx.tables,
            'table',
            queuedBookingEntity.partitionKey({ account_key: account, shard }),
            { beginsWith: queuedPrefix },
          ),
          ConsistentRead: true,
          Limit: ROUND_READ,
        }),
      );
      const entries = (out.Items ?? []).map((item) => {
        const entry = queuedBookingEntity.parse(item);
        // The booking's id is the rest of its sort key (`Q#<booking id>`).
        const id = String(item.sk).slice(queuedPrefix.length);
        return { id, queuedAtMs: entry.queued_at, booking: entry.booking };
      });
      return { shard, entries, more: out.LastEvaluatedKey !== undefined };
    }),
  );
}

/** The shards a round reads: all of them when the tenure's view must be rebuilt, else the next in turn. */
function shardsToRead(tenure: HotAccountTenure): number[] {
  if (tenure.readAll) {
    tenure.readAll = false;
    return Array.from({ length: QUEUE_SHARDS }, (_, shard) => shard);
  }
  const shard = tenure.nextShard;
  tenure.nextShard = (shard + 1) % QUEUE_SHARDS;
  return [shard];
}

/** The reads, into the tenure's view of the queue (each replaces what its shard's last read found). */
function install(tenure: HotAccountTenure, reads: readonly ShardRead[]): void {
  for (const { shard, entries, more } of reads) {
    tenure.queued.set(shard, entries);
    const newest = entries.at(-1);
    if (newest && more) tenure.fullShards.set(shard, newest.queuedAtMs);
    else tenure.fullShards.delete(shard);
  }
}

/**
 * The tenure's view of the queue is no longer to be trusted (a transaction whose outcome is unknown, an entry
 * answered elsewhere): the next round reads every shard, and the waiters here read their results once more.
 */
function rebuildView(ctx: Pick<AppContext, 'clock'>, tenure: HotAccountTenure): void {
  tenure.readAll = true;
  tenure.prefetched = false;
  tenure.startedMs = ctx.clock.nowMs();
}

/**
 * Whether the tenure still owes answers once `answered` are: entries it read that were queued before it began,
 * or a shard whose read stopped at its limit before reaching what was queued after it began.
 */
function tenureOwes(tenure: HotAccountTenure, answered: ReadonlySet<string>): boolean {
  for (const entries of tenure.queued.values())
    if (entries.some((entry) => entry.queuedAtMs <= tenure.startedMs && !answered.has(entry.id))) return true;
  for (const newest of tenure.fullShards.values()) if (newest <= tenure.startedMs) return true;
  return false;
}

/** The entries answered, out of the tenure's view of the queue. */
function forget(tenure: HotAccountTenure, answered: ReadonlySet<string>): void {
  for (const [shard, entries] of tenure.queued)
    tenure.queued.set(
      shard,
      entries.filter((entry) => !answered.has(entry.id)),
    );
}

/** A booking a round may take: its queue shard and its entry. */
interface Candidate {
  shard: number;
  entry: QueuedEntry;
}

/** A round's decoder: each entry decoded once (a round that sets contended bookings apart looks at every entry it knows). */
function bookingDecoder(): (entry: QueuedEntry) => StoredBooking {
  const decoded = new Map<string, StoredBooking>();
  return (entry) => {
    let stored = decoded.get(entry.id);
    if (!stored) {
      stored = decodeBooking(entry.booking);
      decoded.set(entry.id, stored);
    }
    return stored;
  };
}

/** The accounts a booking changes whose reads a round's transaction is conditioned on. */
function conditionedAccounts(stored: StoredBooking): string[] {
  return readAccountsOf(movementOf(stored)).map((entry) => accountKey(entry.account));
}

/**
 * The bookings the tenure knows of, oldest first (booking ids sort by time): its view of the queue and this
 * process's own queued bookings. One of those another committer answered meanwhile fails the round on its
 * queue entry's condition, and is dropped (`roundFailed`); its request then reads its result.
 */
function knownBookings(tenure: HotAccountTenure, turns: HotAccountTurns): Candidate[] {
  const known = new Map<string, Candidate>();
  for (const [shard, entries] of tenure.queued) for (const entry of entries) known.set(entry.id, { shard, entry });
  for (const [id, local] of turns.local) if (!known.has(id)) known.set(id, local);
  return [...known.values()].sort((a, b) => a.entry.id.localeCompare(b.entry.id));
}

/**
 * The round's bookings, oldest first. While accounts are contended (one failed a round: a booking outside the
 * queue moved it in between), the bookings on them and the others take rounds in turn, each side alone when
 * the other has none: a round fails as a whole, so one busy account in every round would hold up the queue.
 */
function roundOf(
  tenure: HotAccountTenure,
  known: readonly Candidate[],
  bookingOf: (entry: QueuedEntry) => StoredBooking,
): Candidate[] {
  if (tenure.contended.size === 0) return known.slice(0, ROUND_READ);
  const onContended: Candidate[] = [];
  const others: Candidate[] = [];
  for (const candidate of known) {
    const touches = conditionedAccounts(bookingOf(candidate.entry)).some((key) => tenure.contended.has(key));
    const side = touches ? onContended : others;
    if (side.length < ROUND_READ) side.push(candidate);
  }
  if (onContended.length === 0) {
    tenure.contended.clear();
    return others;
  }
  if (others.length === 0) return onContended;
  const theirs = tenure.contendedTurn;
  tenure.contendedTurn = !theirs;
  return theirs ? onContended : others;
}

/**
 * One round of the committer, while its tenure holds the lease: one read of a queue shard (every shard in the
 * tenure's first round), one consistent read of the accounts of the oldest bookings it knows of, and one
 * transaction: those a guarded debit can't cover refused, the rest committed with each booking's result, and
 * the lease renewed (or, in the tenure's last round, given back), conditioned on its owner, so a committer
 * that lost its lease commits nothing. A transaction that fails leaves everything as it was: a booking whose
 * own condition failed (a client id taken, a participant locked) is refused alone and the others go next
 * round; one answered elsewhere is dropped from the view; one answered before (its entry queued again) is
 * removed; an account another booking moved in between is read again, and its bookings go in rounds apart
 * from the others' until one commits (`roundOf`). Whether the next turn should follow at once is returned.
 */
async function commitRound(
  ctx: Pick<AppContext, 'clock' | 'db' | 'tables' | 'logger' | 'retry'>,
  account: string,
  turns: HotAccountTurns,
  tenure: HotAccountTenure,
): Promise<boolean> {
  // The shard read alongside the last transaction saves this round its own read. A view to build from every
  // shard (a tenure's first round) is read alongside this round's transaction when this process has bookings of
  // its own to commit meanwhile; the tenure then ends no earlier than the round after it.
  const readLater = tenure.readAll && turns.local.size > 0;
  if (!readLater && (!tenure.prefetched || tenure.readAll))
    install(tenure, await readShards(ctx, account, shardsToRead(tenure)));
  tenure.prefetched = false;
  const bookingOf = bookingDecoder();
  const oldest = roundOf(tenure, knownBookings(tenure, turns), bookingOf);
  if (oldest.length === 0) {
    if (tenureOwes(tenure, new Set()) || turns.waitingFor.size > 0) return true;
    // Nothing left that this tenure owes, nobody here waits: the lease goes back for the next committer.
    turns.tenure = undefined;
    await releaseLease(ctx, account, tenure.owner);
    return false;
  }
  const bookings: StoredBooking[] = oldest.map(({ entry }) => bookingOf(entry));
  const shardOf = new Map(oldest.map(({ shard, entry }) => [entry.id, shard]));
  const wanted = bookings.flatMap((stored) => readAccountsOf(movementOf(stored)));
  const reads = await readAccounts(ctx, wanted);
  const nowMs = ctx.clock.nowMs();
  const queue: QueueKeys = {
    account,
    shardOf: (bookingId) => shardOf.get(bookingId)!,
    resultExpiresAtMs: nowMs + QUEUE_RETENTION_MS,
    resultTtlSeconds: Math.ceil((nowMs + QUEUE_RETENTION_MS) / 1000),
  };
  const plan = planBatch(bookings, reads, { queued: true, refuseUncovered: true, reserved: 1 });
  const transaction = batchTransaction(ctx, plan, reads, queueAnswers(ctx, queue), nowMs);
  const answered = new Set(plan.planned.map((entry) => entry.booking.id));
  // The last round: what the tenure owes and what this process waits for, all answered by it.
  const last =
    !readLater && !tenureOwes(tenure, answered) && [...turns.waitingFor.keys()].every((id) => answered.has(id));
  const untilMs = nowMs + LEASE_MS;
  const lease = last ? leaseRelease(ctx, account, tenure.owner) : leaseRenewal(ctx, account, tenure.owner, untilMs);
  const items = [...transaction.items, lease];
  const origins: ItemOrigin[] = [...transaction.origins, { kind: 'lease' }];
  // The next round's read of the queue goes alongside this transaction (a shard's entries this transaction
  // answers are dropped from what it finds below), so a round waits for two calls in sequence, not three.
  const prefetch = last
    ? undefined
    : readShards(ctx, account, shardsToRead(tenure)).catch((error: unknown) => {
        ctx.logger.warn('hot account: a read of its queue failed; the next round reads it again', { account, error });
        if (readLater) tenure.readAll = true;
        return undefined;
      });
  const sent = await ctx.db
    .send(new TransactWriteCommand({ TransactItems: items, ClientRequestToken: randomUUID() }))
    .then(
      () => undefined,
      (error: unknown) => ({ error }),
    );
  const read = await prefetch;
  if (read) {
    install(tenure, read);
    tenure.prefetched = true;
  }
  if (sent) {
    const { error } = sent;
    if (!(error instanceof TransactionCanceledException)) {
      // Throttled past the SDK's retries: whether it committed is unknown, so the view is rebuilt.
      if (retryReason(error)) {
        rebuildView(ctx, tenure);
        return false;
      }
      throw error;
    }
    return roundFailed(ctx, { account, queue, turns, tenure }, error, { items, origins }, bookings);
  }
  tenure.failedRounds = 0;
  forget(tenure, answered);
  if (last) {
    if (turns.tenure === tenure) turns.tenure = undefined;
    turns.releasedLast = true;
  } else tenure.untilMs = untilMs;
  for (const entry of plan.planned) {
    const booked = entry.outcome.kind === 'booked';
    // An account a booking of the round moved is contended no more: its bookings join the others' rounds.
    if (booked) for (const key of conditionedAccounts(entry.booking)) tenure.contended.delete(key);
    const result: BookingResult =
      entry.outcome.kind === 'booked' ? { outcome: 'booked' } : { outcome: 'refused', refusal: entry.outcome.refusal };
    answer(turns, entry.booking.id, result);
    if (result.outcome === 'refused') await releaseClaims(ctx, entry.booking);
  }
  if (plan.planned.length > 1) ctx.logger.debug('group commit', { account, bookings: plan.planned.length });
  return !last;
}

/** What a round works on: its account, where its bookings are queued, this process's waiters, the tenure. */
interface RoundScope {
  account: string;
  queue: QueueKeys;
  turns: HotAccountTurns;
  tenure: HotAccountTenure;
}

/**
 * A round's transaction was cancelled: nothing of it was written. What failed decides the next round (whether
 * it should follow at once is returned), and each failed round is logged with how many failed in a row.
 */
async function roundFailed(
  ctx: Pick<AppContext, 'clock' | 'db' | 'tables' | 'logger'>,
  { account, queue, turns, tenure }: RoundScope,
  error: TransactionCanceledException,
  transaction: { items: TransactItem[]; origins: ItemOrigin[] },
  bookings: readonly StoredBooking[],
): Promise<boolean> {
  tenure.failedRounds += 1;
  const failed = failedItems(error, transaction);
  const conditionFailed = (kind: ItemOrigin['kind']) =>
    failed.flatMap(({ origin, code }) =>
      code === 'ConditionalCheckFailed' && origin.kind === kind && 'booking' in origin
        ? [bookings[origin.booking]!]
        : [],
    );
  const note = (outcome: string, extra: Record<string, unknown> = {}) =>
    ctx.logger.warn(`hot account: a round's transaction failed; ${outcome}`, {
      account,
      failedRounds: tenure.failedRounds,
      bookings: bookings.length,
      ...extra,
    });
  if (failed.some(({ origin, code }) => code === 'ConditionalCheckFailed' && origin.kind === 'lease')) {
    // Lost: the lease lapsed and another took it. Its committer goes on; nothing of this round was written.
    note('the lease was lost');
    if (turns.tenure === tenure) turns.tenure = undefined;
    return true;
  }
  const answeredBefore = conditionFailed('result');
  if (answeredBefore.length > 0) {
    note('a booking answered before was queued again', { bookingIds: answeredBefore.map((stored) => stored.id) });
    for (const stored of answeredBefore) await dropAnswered(ctx, { queue, turns, tenure }, stored.id);
    return true;
  }
  const gone = conditionFailed('queue');
  if (gone.length > 0) {
    // Answered by another committer meanwhile: this tenure's view of the queue is stale, and those bookings'
    // requests here read their results.
    note('bookings answered by another committer', { bookingIds: gone.map((stored) => stored.id) });
    for (const stored of gone) turns.local.delete(stored.id);
    rebuildView(ctx, tenure);
    return true;
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
    const outcome = await refuseAlone(ctx, queue, stored, result, turns);
    if (outcome === 'refused') forget(tenure, new Set([stored.id]));
    else if (outcome === 'answered') await dropAnswered(ctx, { queue, turns, tenure }, stored.id);
    else {
      if (outcome === 'gone') turns.local.delete(stored.id);
      rebuildView(ctx, tenure);
    }
    return true;
  }
  // Accounts a booking outside the queue moved between the round's read and its transaction (or wrote at the
  // same moment): read again, and their bookings go in rounds apart from the others' until one commits.
  const stale = [
    ...new Set(
      failed.flatMap(({ origin }) => (origin.kind === 'account' && origin.key !== account ? [origin.key] : [])),
    ),
  ];
  note(stale.length > 0 ? 'accounts moved meanwhile go in rounds of their own' : 'read again after a pause', {
    stale,
  });
  if (stale.length === 0) return false;
  for (const key of stale) tenure.contended.add(key);
  tenure.contendedTurn = false;
  return true;
}

/**
 * A booking answered before whose entry is in the queue again: the SDK sent its queue put again after the
 * first, whose answer was lost, had been answered. Its result stands (its transaction failed on it, so nothing
 * was booked twice); the entry is removed, else every round holding it (the oldest first) would fail and the
 * queue behind it would never move, and its request, if it waits here, is told the stored result.
 */
async function dropAnswered(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  { queue, turns, tenure }: Pick<RoundScope, 'queue' | 'turns' | 'tenure'>,
  bookingId: string,
): Promise<void> {
  await writtenUnlessConditionFailed(ctx.db.send(new DeleteCommand(queueDelete(ctx, queue, bookingId).Delete!)));
  forget(tenure, new Set([bookingId]));
  const out = await ctx.db.send(
    new GetCommand({
      TableName: ctx.tables.main,
      Key: bookingResultEntity.key(queuedParts(queue, bookingId)),
      ConsistentRead: true,
    }),
  );
  if (out.Item) answer(turns, bookingId, JSON.parse(bookingResultEntity.parse(out.Item).result) as BookingResult);
  else turns.local.delete(bookingId);
}

/** Every planned booking's answer on the hot path, booked or refused: its queue entry removed, its result stored. */
export function queueAnswers(ctx: Pick<AppContext, 'tables'>, queue: QueueKeys): QueueAnswers {
  return (planned: readonly PlannedBooking[]) =>
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
        { item: resultPut(ctx, queue, entry.booking.id, result), origin: { kind: 'result', booking: entry.position } },
      ];
    });
}

/** A queued booking's entry and result: where they are. */
function queuedParts(queue: QueueKeys, bookingId: string) {
  return { account_key: queue.account, shard: queue.shardOf(bookingId), booking_id: bookingId };
}

/** The entry of a queued booking, removed by the transaction that answers it (so it is answered once). */
function queueDelete(ctx: Pick<AppContext, 'tables'>, queue: QueueKeys, bookingId: string): TransactItem {
  return queuedBookingEntity.delete(ctx.tables, queuedParts(queue, bookingId), {
    condition: 'attribute_exists(pk)',
  });
}

function resultPut(
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

/** A booking's result, kept for this process's request waiting for it (if one is). */
function answer(turns: HotAccountTurns, bookingId: string, result: BookingResult): void {
  turns.local.delete(bookingId);
  if (!turns.waitingFor.delete(bookingId)) return;
  turns.results.set(bookingId, result);
  turns.wake.get(bookingId)?.();
}

/**
 * A booking refused for its own reason: its result stored and its queue entry removed, in one transaction.
 * What came of it: `refused` here; `gone`, its entry answered meanwhile by another committer; `answered`, its
 * result stored before though its entry is queued (`dropAnswered`); `unknown`, a conflict or throttling (the
 * next round sees).
 */
async function refuseAlone(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  queue: QueueKeys,
  stored: StoredBooking,
  result: BookingResult,
  turns: HotAccountTurns,
): Promise<'refused' | 'gone' | 'answered' | 'unknown'> {
  try {
    await ctx.db.send(
      new TransactWriteCommand({
        TransactItems: [queueDelete(ctx, queue, stored.id), resultPut(ctx, queue, stored.id, result)],
      }),
    );
  } catch (error) {
    if (error instanceof TransactionCanceledException) {
      const [entry, answered] = error.CancellationReasons ?? [];
      if (entry?.Code === 'ConditionalCheckFailed') return 'gone';
      if (answered?.Code === 'ConditionalCheckFailed') return 'answered';
      return 'unknown';
    }
    if (retryReason(error)) return 'unknown';
    throw error;
  }
  answer(turns, stored.id, result);
  await releaseClaims(ctx, stored);
  return 'refused';
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
