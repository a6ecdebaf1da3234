import type { APIGatewayProxyResult } from 'aws-lambda';
import type { TaggedItem } from '../store/table/transaction-items.js';
import type { StoredResponse } from '../store/windows.js';

/**
 * A booking route's checks and claims carried by its booking's transaction rather than read or written before
 * it (docs/performance.md, "DynamoDB calls per request"): the key still the one the request was verified
 * against, the signature's replay claim, the X-Request-Id's record with the answer. A warm POST /transfers is
 * then its transaction alone.
 *
 * When one of them fails (a revoked key, a signature or X-Request-Id already claimed), or the booking would go
 * to a hot account's queue (where only data travels, and the request must hold its claims while it waits), the
 * transaction wrote nothing: the request makes each claim apart, exactly as a route that doesn't book does (the
 * key read again, the signature claimed, the X-Request-Id's run begun), so every refusal is today's, and runs
 * its use case again with the claims already made.
 */
export interface BookingClaims {
  /** The transaction items, in order, given the answer the booking stores (the X-Request-Id's record holds it). */
  items: Array<(response: StoredResponse) => TaggedItem>;
  /** Each claim made apart, in order; a response when one answers the request (a completed X-Request-Id's). */
  apart: Array<() => Promise<APIGatewayProxyResult | undefined>>;
  /**
   * Before a refusal by the booking's transaction is answered: the key read now and the request verified
   * against it, so a revoked key hears 403 rather than what its request would have been refused for. (A
   * refusal before the booking makes the claims apart first: `apart`.)
   */
  beforeRefusal: () => Promise<void>;
  /** Set once the use case has put the items in its booking. */
  carried?: boolean;
}

/** A claim of the booking's transaction failed, or the booking would queue: the claims are made apart (`BookingClaims`). */
export class ClaimsApartError extends Error {
  constructor(why: string) {
    super(`booking claims made apart: ${why}`);
    this.name = 'ClaimsApartError';
  }
}

/** A booking item that only its requesting process's own transaction may commit, refused by making the claims apart. */
export function claimItem(item: TaggedItem['item'], why: string): TaggedItem {
  return {
    item,
    onConditionFailed: () => new ClaimsApartError(why),
    notQueued: () => new ClaimsApartError('the booking would queue behind a hot account'),
  };
}
