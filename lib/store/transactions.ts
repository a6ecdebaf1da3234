import { randomUUID } from 'node:crypto';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { ServiceUnavailableError } from '../domain/errors.js';
import { dynamo } from './client.js';

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/**
 * A transaction item and what its failed condition means in domain terms (insufficient funds, a client id
 * already used, a quote already executed...). The first failed item's meaning is what the caller sees.
 */
export interface TaggedItem {
  item: TransactItem;
  onConditionFailed?: () => Error;
}

export const MAX_TRANSACTION_ITEMS = 100;
const MAX_CONFLICT_ATTEMPTS = 5;

/** Conflicts with another in-flight transaction on the same items: harmless to retry after a short pause. */
function isConflictOnly(error: TransactionCanceledException): boolean {
  const reasons = error.CancellationReasons ?? [];
  return reasons.some((reason) => reason.Code === 'TransactionConflict') && !reasons.some((reason) => reason.Code === 'ConditionalCheckFailed');
}

/**
 * Writes all items atomically. Transaction conflicts are retried a bounded number of times with full
 * jitter (then a 503 the client may retry); a failed condition becomes the domain error its item names; anything else propagates.
 */
export async function transactWrite(items: readonly TaggedItem[]): Promise<void> {
  if (items.length === 0) return;
  if (items.length > MAX_TRANSACTION_ITEMS) throw new Error(`transaction of ${items.length} items exceeds DynamoDB's limit of ${MAX_TRANSACTION_ITEMS}`);
  for (let attempt = 1; ; attempt++) {
    try {
      // The token makes the SDK's own retries (e.g. after a lost response) idempotent: DynamoDB answers a
      // repeat of a committed transaction with success instead of applying it twice. A new attempt after a
      // cancellation gets a new token.
      await dynamo().send(new TransactWriteCommand({ TransactItems: items.map((tagged) => tagged.item), ClientRequestToken: randomUUID() }));
      return;
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      if (isConflictOnly(error)) {
        if (attempt >= MAX_CONFLICT_ATTEMPTS) throw new ServiceUnavailableError('the accounts involved are busy; retry shortly');
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 25 * 2 ** attempt));
        continue;
      }
      const reasons = error.CancellationReasons ?? [];
      const failed = reasons.findIndex((reason) => reason.Code === 'ConditionalCheckFailed');
      const meaning = failed >= 0 ? items[failed]?.onConditionFailed : undefined;
      if (meaning) throw meaning();
      throw error;
    }
  }
}
