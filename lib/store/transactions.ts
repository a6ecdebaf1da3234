import { randomUUID } from 'node:crypto';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { ServiceUnavailableError } from '../domain/errors.js';
import { counterUpdates, type CountChange } from './counters.js';
import type { AppContext } from '../context.js';

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/**
 * A transaction item and what its failed condition means in domain terms (insufficient funds, a client id
 * already used, a quote already executed...). The first failed item's meaning is what the caller sees.
 */
export interface TaggedItem {
  item: TransactItem;
  onConditionFailed?: () => Error;
  /** How this write moves list counters (a record created, a state changed); applied in the same transaction. */
  counts?: readonly CountChange[];
  /**
   * What to write instead when this item's condition fails: a write that may find its item present or absent
   * (an account credited for the first time, which then enters its platform's account count) states which
   * it expects and names the other case here. Not an error: the transaction is retried with the swap.
   */
  otherwise?: () => TaggedItem;
  /**
   * An item that depends on a read (an account update and its balance event): before each attempt it is
   * replaced by what `prepare` builds from a fresh read. If one of those items' conditions fails and `stale`
   * says the read went out of date, the transaction is prepared and tried again instead of failing.
   */
  prepare?: () => Promise<PreparedItems>;
}

export interface PreparedItems {
  items: TaggedItem[];
  stale: () => Promise<boolean>;
}

interface Expanded {
  tagged: TaggedItem;
  /** Index of the given item it came from. */
  origin: number;
  stale?: () => Promise<boolean>;
}

/** The items to send: prepared items replaced by what they prepare, each remembering where it came from. */
async function expand(items: readonly TaggedItem[]): Promise<Expanded[]> {
  const prepared = await Promise.all(items.map((tagged) => (tagged.prepare ? tagged.prepare() : undefined)));
  return items.flatMap((tagged, origin) => {
    const done = prepared[origin];
    return done ? done.items.map((item) => ({ tagged: item, origin, stale: done.stale })) : [{ tagged, origin }];
  });
}

export const MAX_TRANSACTION_ITEMS = 100;
const MAX_CONFLICT_ATTEMPTS = 5;
const MAX_SWAP_ROUNDS = 4;
/** Reads gone stale under concurrent bookings of one account: more than conflicts, busy accounts see it often. */
const MAX_STALE_ATTEMPTS = 20;

/** Conflicts with another in-flight transaction on the same items: harmless to retry after a short pause. */
function isConflictOnly(error: TransactionCanceledException): boolean {
  const reasons = error.CancellationReasons ?? [];
  return reasons.some((reason) => reason.Code === 'TransactionConflict') && !reasons.some((reason) => reason.Code === 'ConditionalCheckFailed');
}

/**
 * Writes all items atomically. Transaction conflicts are retried a bounded number of times with full
 * jitter (then a 503 the client may retry); a failed condition becomes the domain error its item names; anything else propagates.
 */
export async function transactWrite(ctx: AppContext, given: readonly TaggedItem[]): Promise<void> {
  if (given.length === 0) return;
  const items = [...given];
  let swaps = 0;
  let stales = 0;
  for (let attempt = 1; ; attempt++) {
    const expanded = await expand(items);
    const counts = expanded.flatMap((entry) => entry.tagged.counts ?? []);
    // Counter updates go last (a failed condition is looked up by position among the expanded items), each
    // attempt on freshly drawn shards, so a retry after a conflict on a shard likely avoids it.
    const transactItems = [...expanded.map((entry) => entry.tagged.item), ...counterUpdates(ctx, counts)];
    if (transactItems.length > MAX_TRANSACTION_ITEMS) {
      throw new Error(`transaction of ${transactItems.length} items exceeds DynamoDB's limit of ${MAX_TRANSACTION_ITEMS}`);
    }
    try {
      // The token makes the SDK's own retries (e.g. after a lost response) idempotent: DynamoDB answers a
      // repeat of a committed transaction with success instead of applying it twice. A new attempt after a
      // cancellation gets a new token.
      await ctx.db.send(new TransactWriteCommand({ TransactItems: transactItems, ClientRequestToken: randomUUID() }));
      return;
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      if (isConflictOnly(error)) {
        if (attempt >= MAX_CONFLICT_ATTEMPTS) throw new ServiceUnavailableError('the accounts involved are busy; retry shortly');
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 25 * 2 ** attempt));
        continue;
      }
      const reasons = error.CancellationReasons ?? [];
      const failedItems = reasons.flatMap((reason, index) => (reason.Code === 'ConditionalCheckFailed' && index < expanded.length ? [expanded[index]!] : []));
      // Every failed condition has an alternative (accounts found new, or found existing after all): swap
      // them all and try again. Each swap settles on what the item is; a few rounds cover a racing twin.
      if (failedItems.length > 0 && failedItems.every((entry) => entry.tagged.otherwise && !entry.stale) && swaps < MAX_SWAP_ROUNDS) {
        swaps += 1;
        for (const entry of failedItems) items[entry.origin] = entry.tagged.otherwise!();
        attempt -= 1;
        continue;
      }
      // A prepared item failed because another booking moved its account after our read: read again.
      const staleChecks = await Promise.all(failedItems.map((entry) => (entry.stale ? entry.stale() : false)));
      if (staleChecks.some(Boolean)) {
        if (++stales >= MAX_STALE_ATTEMPTS) throw new ServiceUnavailableError('the accounts involved are busy; retry shortly');
        await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(200, 10 * 2 ** Math.min(stales, 5))));
        attempt -= 1;
        continue;
      }
      const failed = failedItems.find((entry) => !entry.tagged.otherwise);
      const meaning = failed?.tagged.onConditionFailed;
      if (meaning) throw meaning();
      throw error;
    }
  }
}
