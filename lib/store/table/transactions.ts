import { randomUUID } from 'node:crypto';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { batchGetItems } from './batch-get.js';
import { counterUpdates } from './counters.js';
import { MAX_TRANSACTION_ITEMS, type PrepareRead, type TaggedItem } from './transaction-items.js';
import { retryReason, withRetry } from './retry.js';
import type { AppContext } from '../../context.js';

interface Expanded {
  tagged: TaggedItem;
  /** Index of the given item it came from. */
  origin: number;
  stale?: () => Promise<boolean>;
}

/** The items to send: prepared items replaced by what they prepare, each remembering where it came from. */
async function expand(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  items: readonly TaggedItem[],
): Promise<Expanded[]> {
  const read = readsTogether(ctx);
  const prepared = await Promise.all(items.map((tagged) => (tagged.prepare ? tagged.prepare(read) : undefined)));
  return items.flatMap((tagged, origin) => {
    const done = prepared[origin];
    return done ? done.items.map((item) => ({ tagged: item, origin, stale: done.stale })) : [{ tagged, origin }];
  });
}

/**
 * A `PrepareRead` that gathers the reads asked for together (the prepares of one attempt start at once) and
 * sends them as one consistent BatchGetItem (`batchGetItems`: 100 keys a call,
 * unprocessed keys asked again). Each read gets its item, or undefined when there is none.
 */
function readsTogether(ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>): PrepareRead {
  type Waiting = {
    key: Record<string, unknown>;
    resolve: (item: Record<string, unknown> | undefined) => void;
    reject: (error: unknown) => void;
  };
  const identity = (key: Record<string, unknown>) => `${String(key.pk)}\u0000${String(key.sk)}`;
  let waiting: Waiting[] | undefined;
  const flush = async (batch: Waiting[]) => {
    try {
      const keys = [...new Map(batch.map((entry) => [identity(entry.key), entry.key])).values()];
      const found = new Map(
        (await batchGetItems(ctx, keys, { consistent: true, what: 'prepared reads' })).map((item) => [
          identity(item),
          item,
        ]),
      );
      for (const entry of batch) entry.resolve(found.get(identity(entry.key)));
    } catch (error) {
      for (const entry of batch) entry.reject(error);
    }
  };
  return (key) =>
    new Promise((resolve, reject) => {
      if (!waiting) {
        const batch: Waiting[] = [];
        waiting = batch;
        // Once the prepares started together have all asked: each asks before its first await, so by the
        // time a microtask runs, every read of the attempt is in the batch.
        queueMicrotask(() => {
          waiting = undefined;
          void flush(batch);
        });
      }
      waiting.push({ key, resolve, reject });
    });
}

const MAX_SWAP_ROUNDS = 4;

/**
 * Reads gone stale under concurrent bookings of one account: more attempts than for conflicts, with short
 * pauses, as busy accounts see it often (the policy's time bound still holds).
 */
const STALE_READ_RETRIES = { maxAttempts: 20, maxDelayMs: 200 };

/** A prepared item's condition failed because another booking moved its account after our read. */
class StaleReadError extends Error {
  constructor() {
    super('a prepared read went stale');
    this.name = 'StaleReadError';
  }
}

/**
 * Why a failed transaction is worth another attempt (`lib/store/table/retry.ts`): a cancellation for conflicts or
 * throttling only (nothing was written under its token), a read gone stale, or a throttling exception the
 * SDK's own retries gave up on. The latter is told apart: an earlier SDK attempt of that very request may
 * have committed with its answer lost, so it is resent unchanged (see `transactWrite`).
 */
function transactionRetryReason(error: unknown): string | undefined {
  if (error instanceof StaleReadError) return 'stale';
  const reason = retryReason(error);
  if (reason === 'throttled' && !(error instanceof TransactionCanceledException)) return 'throttled-request';
  return reason;
}

interface Attempt {
  input: TransactWriteCommandInput;
  expanded: Expanded[];
}

/**
 * Writes all items atomically. Conflicts, throttling and stale prepared reads are retried under the
 * context's retry policy (then a 503 the client may retry); a failed condition becomes the domain error its
 * item names, or swaps in the item's `otherwise`; anything else propagates.
 */
export async function transactWrite(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  given: readonly TaggedItem[],
): Promise<void> {
  if (given.length === 0) return;
  const items = [...given];
  let swaps = 0;
  let sent: Attempt | undefined;
  const options = { what: 'transaction', classify: transactionRetryReason, reasons: { stale: STALE_READ_RETRIES } };
  await withRetry(ctx, options, async (_attempt, previous) => {
    for (;;) {
      // The token makes a repeat idempotent: DynamoDB answers a repeat of a committed transaction with success
      // instead of applying it twice (the SDK's own retries after a lost response resend it). After a
      // throttling exception the SDK gave up on, one of its attempts may still have committed unanswered, so
      // the very same request goes again, token, reads and shards unchanged (new ones would be a new
      // transaction). After a cancellation nothing committed under the token: prepare anew (fresh reads), with
      // a new token and counter shards drawn again, so a retry after a conflict on a shard likely avoids it.
      const attempt = previous === 'throttled-request' && sent ? sent : await buildAttempt(ctx, items);
      previous = undefined;
      sent = attempt;
      try {
        await ctx.db.send(new TransactWriteCommand(attempt.input));
        return;
      } catch (error) {
        if (!(error instanceof TransactionCanceledException) || retryReason(error)) throw error;
        const { expanded } = attempt;
        const reasons = error.CancellationReasons ?? [];
        const failedItems = reasons.flatMap((reason, index) =>
          reason.Code === 'ConditionalCheckFailed' && index < expanded.length ? [expanded[index]!] : [],
        );
        // Every failed condition has an alternative (accounts found new, or found existing after all): swap
        // them all and try again at once (not a retry: the write changed). Each swap settles on what the item
        // is; a few rounds cover a racing twin.
        if (
          failedItems.length > 0 &&
          failedItems.every((entry) => entry.tagged.otherwise && !entry.stale) &&
          swaps < MAX_SWAP_ROUNDS
        ) {
          swaps += 1;
          for (const entry of failedItems) items[entry.origin] = entry.tagged.otherwise!();
          continue;
        }
        // A prepared item failed because another booking moved its account after our read: read again.
        const staleChecks = await Promise.all(failedItems.map((entry) => (entry.stale ? entry.stale() : false)));
        if (staleChecks.some(Boolean)) throw new StaleReadError();
        const failed = failedItems.find((entry) => !entry.tagged.otherwise);
        const meaning = failed?.tagged.onConditionFailed;
        if (meaning) throw meaning();
        throw error;
      }
    }
  });
}

/**
 * The request for the items as they stand: prepared items read afresh, counter updates last (a failed
 * condition is looked up by position among the expanded items).
 */
async function buildAttempt(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  items: readonly TaggedItem[],
): Promise<Attempt> {
  const expanded = await expand(ctx, items);
  const counts = expanded.flatMap((entry) => entry.tagged.counts ?? []);
  const transactItems = [...expanded.map((entry) => entry.tagged.item), ...counterUpdates(ctx, counts)];
  if (transactItems.length > MAX_TRANSACTION_ITEMS) {
    throw new Error(
      `transaction of ${transactItems.length} items exceeds DynamoDB's limit of ${MAX_TRANSACTION_ITEMS}`,
    );
  }
  return { input: { TransactItems: transactItems, ClientRequestToken: randomUUID() }, expanded };
}
