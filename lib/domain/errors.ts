/**
 * The closed set of errors the domain and the HTTP layer throw on purpose. Each is mapped once to a status
 * and body by `lib/http/error-mapper.ts`; anything else is an internal error and becomes a bare 500.
 */

/** 400: the request is invalid or breaks a business rule. Each entry reads `<field>: <what is wrong>`. */
export class ValidationError extends Error {
  constructor(readonly errors: string[]) {
    super(errors.join('; '));
    this.name = 'ValidationError';
  }
}

/** 400: a debit would take a customer or platform account below zero. Nothing was written. */
export class InsufficientFundsError extends ValidationError {
  constructor(detail = 'insufficient funds') {
    super([detail]);
    this.name = 'InsufficientFundsError';
  }
}

/** 400: the quote's `expire_ts` has passed. */
export class QuoteExpiredError extends ValidationError {
  constructor() {
    super(['quote_id: quote has expired']);
    this.name = 'QuoteExpiredError';
  }
}

/** 403: authentication or permission failure. The message is safe to show the client. */
export class ForbiddenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ForbiddenError';
  }
}

/**
 * 403 for every way authentication can fail (missing header, stale timestamp, unknown or revoked key, wrong
 * passphrase, bad signature): one message for all, so the answer tells a guesser nothing. `reason` is for
 * the log only.
 */
export class AuthenticationError extends ForbiddenError {
  static readonly MESSAGE = 'request could not be authenticated';
  constructor(readonly reason: string) {
    super(AuthenticationError.MESSAGE);
    this.name = 'AuthenticationError';
  }
}

/** 413: the request body is larger than the service accepts; nothing read it further. */
export class PayloadTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`body: larger than ${maxBytes} bytes`);
    this.name = 'PayloadTooLargeError';
  }
}

/** 404: unknown resource, or one that belongs to another platform (never reveal it exists). */
export class NotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotFoundError';
  }
}

/** 409: a client id reused inside its window, a state already reached, or a duplicate still in progress. */
export class ConflictError extends Error {
  constructor(readonly errors: string[]) {
    super(errors.join('; '));
    this.name = 'ConflictError';
  }
}

/** 422: an `X-Request-Id` reused with a different request. */
export class IdempotencyMismatchError extends Error {
  readonly errors = ['X-Request-Id: already used with a different request'];
  constructor() {
    super('X-Request-Id reused with a different request');
    this.name = 'IdempotencyMismatchError';
  }
}

/** 503: a dependency is stale, throttled or down; the client may retry after `retryAfterSeconds`. */
export class ServiceUnavailableError extends Error {
  constructor(
    message: string,
    readonly retryAfterSeconds = 1,
  ) {
    super(message);
    this.name = 'ServiceUnavailableError';
  }
}

/**
 * 429: the API key is over its request rate limit; nothing was done. The fields are the
 * IETF RateLimit-Policy and RateLimit header values (`lib/domain/rate-limits.ts`).
 */
export class RateLimitedError extends Error {
  constructor(
    readonly retryAfterSeconds: number,
    readonly policy: string,
    readonly remaining: string,
  ) {
    super(`rate limit exceeded: retry after ${retryAfterSeconds} s`);
    this.name = 'RateLimitedError';
  }
}

/** Where a queued booking waits: its account's key, the queue shard holding it, and its id. */
export interface QueuedBookingRef {
  account: string;
  queuePk: string;
  bookingId: string;
}

/**
 * 503: the request's booking waits in a busy account's queue longer than a request may wait. It is still
 * booked or refused exactly once; a retry with the same `X-Request-Id` gets that outcome (and, finding it
 * still queued, commits the queue itself: `queued` says where).
 */
export class BookingQueuedError extends ServiceUnavailableError {
  constructor(readonly queued?: QueuedBookingRef) {
    super(
      'the booking is queued behind other bookings of a busy account; retry with the same X-Request-Id for its outcome',
      1,
    );
    this.name = 'BookingQueuedError';
  }
}
