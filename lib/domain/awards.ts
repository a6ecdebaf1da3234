import { createHash } from 'node:crypto';
import type { Money } from './money.js';

/**
 * Rules of award distributions that need no storage: how many recipients a request may name, how they are
 * split into transactions, and what identifies a request when it is retried.
 */

/** The most recipients one `POST /awards/distribute` may name. */
export const MAX_RECIPIENTS = 1000;

/**
 * Items a chunk's transaction writes besides its recipients: the chunk's own state update (its idempotency
 * marker), the movement record, the escrow's balance update, and the list counters the chunk moves (the
 * platform's trades, its terminated trades, its accounts when a recipient's account is new, its movements).
 */
export const CHUNK_FIXED_ITEMS = 7;
/**
 * Items per recipient in a chunk: the recipient's balance update and its account_balance.changed event, the
 * movement's entry on the recipient's account (its movements list), its trade record and its
 * trade.status_changed event, and the check that the recipient is still approved when the chunk commits.
 */
export const CHUNK_ITEMS_PER_RECIPIENT = 6;

/**
 * Chunks credited at once. Each lane debits an escrow account of its own, so concurrent chunk transactions
 * never touch the same item (DynamoDB would cancel one of two transactions changing one item at once); the
 * pool's debit into escrow credits every lane in use, one balance update each, in phase 1's transaction.
 */
export const ESCROW_LANES = 8;

/** The lane of the chunk at `index`: round-robin, so lanes carry about the same number of chunks. */
export function laneOf(index: number): number {
  return index % ESCROW_LANES;
}

/** Recipients that fit one transaction of at most `maxItems` items. */
export function recipientsPerChunk(maxItems: number): number {
  const size = Math.floor((maxItems - CHUNK_FIXED_ITEMS) / CHUNK_ITEMS_PER_RECIPIENT);
  if (size < 1) throw new Error(`a transaction of ${maxItems} items can't credit anyone`);
  return size;
}

/** Consecutive slices of at most `size`, in order. */
export function chunked<T>(items: readonly T[], size: number): T[][] {
  if (!Number.isInteger(size) || size < 1) throw new Error(`chunk size must be a positive integer, got ${size}`);
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
}

/**
 * Problems with the recipient list that need no lookup: its size and repeated codes. A repeated code would
 * pay one customer twice under one confirm, so it is refused and named rather than silently merged.
 */
export function recipientListProblems(codes: readonly string[]): string[] {
  const errors: string[] = [];
  if (codes.length === 0) errors.push('participant_codes: name at least one customer');
  if (codes.length > MAX_RECIPIENTS)
    errors.push(`participant_codes: at most ${MAX_RECIPIENTS} customers per distribution, got ${codes.length}`);
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const code of codes) {
    if (seen.has(code)) repeated.add(code);
    seen.add(code);
  }
  if (repeated.size > 0) errors.push(`participant_codes: listed more than once: ${[...repeated].join(', ')}`);
  return errors;
}

/** What the pool must hold before anything moves: each recipient's quantity, N times. */
export function distributionTotal(quantity: Money, recipients: number): Money {
  return quantity.mul(recipients);
}

/**
 * A digest of what a distribution request asks for. A retry that resumes a distribution must ask for the
 * same thing; the amount is compared by value (`0.10` and `0.1` are one request) and the recipients in order.
 */
export function distributionFingerprint(request: {
  asset: string;
  quantity: Money;
  quotedCurrency: string;
  participantCodes: readonly string[];
}): string {
  const canonical = JSON.stringify([
    request.asset,
    request.quantity.toFixed(),
    request.quotedCurrency,
    request.participantCodes,
  ]);
  return createHash('sha256').update(canonical).digest('base64');
}
