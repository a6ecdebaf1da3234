import { randomInt, randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DeleteCommand, PutCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { AppContext, HotAccountTenure, HotAccountTurns, QueuedEntry } from '../context.js';
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
const QUEUE_SHARDS = 8;

type HotContext = Pick<AppContext, 'clock' | 'db' | 'tables' | 'logger' | 'config' | 'caches' | 'retry' | 'deadlines'>;

/** The booking queued under its hot account; commits it (and whatever else is queued) or waits for its result. */
export async function bookHot(ctx: HotContext, booking: Booking, hot: AccountRead): Promise<void> {
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
  const result = await waitForResult(ctx, queued, nowMs, (error) => {
    throw stillQueued(ctx, queued, error);
  });
  if (!result) throw new BookingQueuedError(queued);
  settle(booking, result);
}

/**
 * Takes turns on the booking's account until a round has its result, or the wait bound passes (undefined).
 * A turn that throws ends the wait with what `onTurnFailed` returns. `queuedAtMs`: when its queueing began (0
 * when unknown). A request whose round answered it while its process holds the lease, alone, keeps committing
 * until its tenure has answered what was queued before it began (flat combining: the queue is drained by
 * whoever is there, and nothing waits for traffic that may never come).
 */
async function waitForResult(
  ctx: HotContext,
  queued: QueuedBookingRef,
  queuedAtMs: number,
  onTurnFailed: (error: unknown) => undefined,
): Promise<BookingResult | undefined> {
  const base = bookingLeaseEntity.partitionKey({ account_key: queued.account });
  const turns = turnsOf(ctx, base);
  turns.waiting += 1;
  turns.waitingFor.set(queued.bookingId, queuedAtMs);
  const { timing } = ctx.retry;
  // The wait's own bound, or the invocation's deadline if sooner: a request that must stop answers 503 with its
  // booking still queued, and a retry with its X-Request-Id finds the outcome.
  const deadline = timing.elapsedMs() + Math.min(ctx.config.HOT_ACCOUNT_WAIT_MS, ctx.deadlines.remainingMs());
  const queue = { account: queued.account, base, pk: queued.queuePk };
  const waiter: Waiter = { bookingId: queued.bookingId, queuedAtMs, polledIn: undefined };
  let own: BookingResult | undefined;
  try {
    for (let pause = 2; ; pause = Math.min(pause * 2, 40)) {
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
      // Answered: it stays on only as its process's last committer with a tenure still owing answers.
      if (own && (turn.stop || !turns.tenure || turns.waiting > 1)) return own;
      if (timing.elapsedMs() > deadline) return own;
      if (turn.again) {
        pause = 1;
        continue;
      }
      await timing.sleep(pause / 2 + timing.random() * pause);
    }
  } finally {
    turns.waiting -= 1;
    turns.waitingFor.delete(queued.bookingId);
    if (turns.waiting === 0) {
      // The last waiter of this process goes: a tenure still held is given back for the next committer.
      const tenure = turns.tenure;
      turns.tenure = undefined;
      ctx.caches.hotAccounts.delete(base);
      if (tenure) await releaseLease(ctx, queued.account, tenure.owner).catch(() => undefined);
    }
  }
}

/** A waiting request, as its turns see it. */
interface Waiter {
  bookingId: string;
  queuedAtMs: number;
  /** The tenure (`pollMark`) under which it last read its result from DynamoDB. */
  polledIn: string | undefined;
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
    turns = { turn: Promise.resolve(), waiting: 0, results: new Map(), waitingFor: new Map() };
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
  // follows that one, and this booking stays queued for a round to commit.
  if (!(await settlesWithin(previous, withinMs))) {
    void previous.then(done);
    return { again: false };
  }
  try {
    if (waiter) {
      const local = turns.results.get(waiter.bookingId);
      if (local) return { result: local, again: false };
    }
    // A tenure whose lease lapsed goes on: its next transaction, conditioned on the owner, says whether another
    // took it. A booking queued before the tenure began that its view does not hold may have been answered by
    // another committer: its waiter reads its result once.
    let tenure = turns.tenure;
    const mayBeAnsweredElsewhere =
      waiter !== undefined &&
      waiter.polledIn !== pollMark(tenure) &&
      (!tenure ||
        !turns.waitingFor.has(waiter.bookingId) ||
        (waiter.queuedAtMs <= tenure.startedMs && !inView(tenure, waiter.bookingId)));
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
      return { result: waiter && turns.results.get(waiter.bookingId), again };
    } catch (error) {
      // A round whose outcome is unknown (the process failing under it): the lease is given back, and whoever
      // takes it next reads the queue afresh.
      if (turns.tenure === tenure) turns.tenure = undefined;
      await releaseLease(ctx, queue.account, tenure.owner).catch(() => undefined);
      throw error;
    }
  } finally {
    if (waiter && turns.results.has(waiter.bookingId)) turns.results.delete(waiter.bookingId);
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

/**
 * One round of the committer, while its tenure holds the lease: one read of a queue shard (every shard in the
 * tenure's first round), one consistent read of the accounts of the oldest bookings it knows of, and one
 * transaction: those a guarded debit can't cover refused, the rest committed with each booking's result, and
 * the lease renewed (or, in the tenure's last round, given back), conditioned on its owner, so a committer
 * that lost its lease commits nothing. A transaction that fails leaves everything as it was: a stale account
 * (a cold booking got in between) is read again next round; a booking whose own condition failed (a client id
 * taken, a participant locked) is refused alone and the others go next round. Whether the next turn should
 * follow at once (there is more to do) is returned.
 */
async function commitRound(
  ctx: Pick<AppContext, 'clock' | 'db' | 'tables' | 'logger' | 'retry'>,
  account: string,
  turns: HotAccountTurns,
  tenure: HotAccountTenure,
): Promise<boolean> {
  // The shard read alongside the last transaction saves this round its own read.
  if (!tenure.prefetched || tenure.readAll) install(tenure, await readShards(ctx, account, shardsToRead(tenure)));
  tenure.prefetched = false;
  // Arrival order across the shards: booking ids sort by time.
  const oldest = [...tenure.queued.entries()]
    .flatMap(([shard, entries]) => entries.map((entry) => ({ shard, entry })))
    .sort((a, b) => a.entry.id.localeCompare(b.entry.id))
    .slice(0, ROUND_READ);
  if (oldest.length === 0) {
    if (tenureOwes(tenure, new Set()) || turns.waitingFor.size > 0) return true;
    // Nothing left that this tenure owes, nobody here waits: the lease goes back for the next committer.
    turns.tenure = undefined;
    await releaseLease(ctx, account, tenure.owner);
    return false;
  }
  const bookings: StoredBooking[] = oldest.map(({ entry }) => decodeBooking(entry.booking));
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
  const last = !tenureOwes(tenure, answered) && [...turns.waitingFor.keys()].every((id) => answered.has(id));
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
    const failure = firstFailure(error, { items, origins });
    if (failure?.kind === 'lease') {
      // Lost: the lease lapsed and another took it. Its committer goes on; nothing of this round was written.
      if (turns.tenure === tenure) turns.tenure = undefined;
      return true;
    }
    if (failure?.kind === 'queue') {
      // Answered by another committer meanwhile: this tenure's view of the queue is stale.
      rebuildView(ctx, tenure);
      return true;
    }
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
      if (await refuseAlone(ctx, queue, stored, result, turns)) forget(tenure, new Set([stored.id]));
      else rebuildView(ctx, tenure);
      return true;
    }
    // A stale account, or cancelled for conflicts: read again next round, after a pause.
    return false;
  }
  forget(tenure, answered);
  if (last) {
    if (turns.tenure === tenure) turns.tenure = undefined;
  } else tenure.untilMs = untilMs;
  for (const entry of plan.planned) {
    const result: BookingResult =
      entry.outcome.kind === 'booked' ? { outcome: 'booked' } : { outcome: 'refused', refusal: entry.outcome.refusal };
    answer(turns, entry.booking.id, result);
    if (result.outcome === 'refused') await releaseClaims(ctx, entry.booking);
  }
  if (plan.planned.length > 1) ctx.logger.debug('group commit', { account, bookings: plan.planned.length });
  return !last;
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
        { item: resultPut(ctx, queue, entry.booking.id, result), origin: { kind: 'other' } },
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
  if (!turns.waitingFor.delete(bookingId)) return;
  turns.results.set(bookingId, result);
}

/**
 * A booking refused for its own reason: its result stored and its queue entry removed, in one transaction.
 * Whether it was answered here (not meanwhile by another committer).
 */
async function refuseAlone(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  queue: QueueKeys,
  stored: StoredBooking,
  result: BookingResult,
  turns: HotAccountTurns,
): Promise<boolean> {
  try {
    await ctx.db.send(
      new TransactWriteCommand({
        TransactItems: [queueDelete(ctx, queue, stored.id), resultPut(ctx, queue, stored.id, result)],
      }),
    );
  } catch (error) {
    // Answered meanwhile by another committer, or a conflict: the next round sees.
    if (error instanceof TransactionCanceledException || retryReason(error)) return false;
    throw error;
  }
  answer(turns, stored.id, result);
  await releaseClaims(ctx, stored);
  return true;
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
