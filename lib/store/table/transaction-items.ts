import type { DeleteCommandInput, TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';

/**
 * What a transaction is made of: its items, each with what its failed condition means and the counters it
 * moves. Kept apart from `transactions.ts` (which writes them) and `counters.ts` (which turns count changes
 * into items) so neither imports the other.
 */

/** DynamoDB's limit of items in one TransactWriteItems. */
export const MAX_TRANSACTION_ITEMS = 100;

/** A change of one counter: `list` (e.g. `transfers`) and its `bucket` (`all`, or `trade_state=active`...). */
export interface CountChange {
  platformCode: string;
  list: string;
  bucket: string;
  delta: number;
}

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
   * replaced by what `prepare` builds from a fresh read, made through `read`. If one of those items'
   * conditions fails and `stale` says the read went out of date, the transaction is prepared and tried again
   * instead of failing.
   */
  prepare?: (read: PrepareRead) => Promise<PreparedItems>;
  /**
   * What undoes the claim this item makes when its booking is refused by a committer in another process (a
   * request's id freed, as a failed request frees it): a conditional delete, sent on its own.
   */
  release?: DeleteCommandInput;
  /**
   * The item may commit only in its requesting process's own transaction (a request's claim made with its
   * booking, `lib/http/booking-claims.ts`): when the booking would go to a hot account's queue instead, the
   * request makes the claim apart (which may refuse it), and the booking queues with what this returns in the
   * item's place.
   */
  queuedInstead?: () => Promise<TaggedItem[]>;
}

/**
 * A strongly consistent read of one main-table item for a `prepare`. The reads every prepared item of an
 * attempt asks for at once go out as one BatchGetItem (an award chunk's fifteen accounts, a transfer's two),
 * not one GetItem each.
 */
export type PrepareRead = (key: Record<string, unknown>) => Promise<Record<string, unknown> | undefined>;

export interface PreparedItems {
  items: TaggedItem[];
  stale: () => Promise<boolean>;
}
