import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { ServiceUnavailableError } from '../../domain/errors.js';
import { type Deadlines, MIN_ATTEMPT_MS } from '../../runtime/deadline.js';
import { backoffDelayMs, type RetryPolicy, type Retrying } from '../../runtime/retry-policy.js';

/**
 * Thrown by an operation that made no (or only partial) progress because DynamoDB held back: a batch read
 * answering some keys unprocessed. Retried like throttling; never leaves the store.
 */
export class ThrottledError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ThrottledError';
  }
}

/** Exceptions DynamoDB and the SDK use for "too many requests": nothing was done, so trying again is safe. */
const THROTTLING_NAMES: ReadonlySet<string> = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
]);

/** Cancellation reasons that say nothing about the items, only about the moment. */
const CONFLICT_REASONS: ReadonlySet<string> = new Set(['TransactionConflict']);
const THROTTLING_REASONS: ReadonlySet<string> = new Set([
  'ThrottlingError',
  'ProvisionedThroughputExceeded',
  'RequestLimitExceeded',
]);

type RetryReason = 'conflict' | 'throttled';

/**
 * Why an error is worth another attempt, or undefined when it isn't. A cancelled transaction is retried only
 * when every item that failed failed for conflict or throttling: a failed condition is an answer about the
 * data (insufficient funds, a claim taken) and is never retried blindly; what a caller does about it (swap an
 * `otherwise` item, read again) is its own decision.
 */
export function retryReason(error: unknown): RetryReason | undefined {
  if (error instanceof TransactionCanceledException) {
    const failed = (error.CancellationReasons ?? [])
      .map((reason) => reason.Code ?? 'None')
      .filter((code) => code !== 'None');
    if (failed.length === 0 || !failed.every((code) => CONFLICT_REASONS.has(code) || THROTTLING_REASONS.has(code)))
      return undefined;
    return failed.some((code) => THROTTLING_REASONS.has(code)) ? 'throttled' : 'conflict';
  }
  if (error instanceof ThrottledError) return 'throttled';
  const name = (error as { name?: unknown } | null)?.name;
  // A single write that met a transaction in flight on its item: nothing was written.
  if (name === 'TransactionConflictException') return 'conflict';
  if (typeof name === 'string' && THROTTLING_NAMES.has(name)) return 'throttled';
  return undefined;
}

interface RetryOptions {
  /** What is being done, for the log line when the attempts run out (e.g. "transaction", "price read"). */
  what: string;
  /** Overrides of the context's policy for this call (e.g. more attempts for reads gone stale). */
  policy?: Partial<RetryPolicy>;
  /** Which errors to retry; defaults to `retryReason`. A caller may add its own reasons (a stale read). */
  classify?: (error: unknown) => string | undefined;
  /**
   * Reasons with a budget of their own: their failures are counted apart from the others' and pause by
   * their own numbers (reads gone stale under busy accounts: many quick attempts). The time bound is shared.
   */
  reasons?: Record<string, Partial<Pick<RetryPolicy, 'maxAttempts' | 'baseDelayMs' | 'maxDelayMs'>>>;
}

/** The slice of the context the helper uses (so a unit test needs no DynamoDB client). */
interface RetryContext {
  retry: Retrying;
  logger: { warn(message: string, ...extra: unknown[]): void };
  /** The invocation's deadline: no attempt starts that could not finish before it (none: only the policy bounds). */
  deadlines?: Pick<Deadlines, 'remainingMs'>;
}

/**
 * Runs `operation` until it succeeds, fails for a reason that isn't retried (which propagates as it is), or
 * the policy's attempts or time run out, or the next attempt could not start before the invocation's deadline:
 * then a `ServiceUnavailableError` (503 with Retry-After), the
 * service's "try again" answer. `operation` gets the attempt number (1 = first) and the reason the previous
 * attempt failed, so it can rebuild what must differ (fresh counter shards, a new read) or resend exactly
 * what must not (the same ClientRequestToken).
 */
export async function withRetry<T>(
  ctx: RetryContext,
  options: RetryOptions,
  operation: (attempt: number, previous: string | undefined) => Promise<T>,
): Promise<T> {
  const policy = { ...ctx.retry.policy, ...options.policy };
  const { timing } = ctx.retry;
  const classify = options.classify ?? retryReason;
  const startedMs = timing.elapsedMs();
  // Failures so far per budget: each reason with a budget of its own, every other reason together.
  const failures = new Map<string, number>();
  let previous: string | undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation(attempt, previous);
    } catch (error) {
      const reason = classify(error);
      if (reason === undefined) throw error;
      const own = options.reasons?.[reason];
      const budget = own ? reason : '';
      const failed = (failures.get(budget) ?? 0) + 1;
      failures.set(budget, failed);
      const limits = { ...policy, ...own };
      const delayMs = backoffDelayMs(limits, failed, timing.random);
      const outOfTime =
        timing.elapsedMs() - startedMs + delayMs > policy.maxElapsedMs ||
        (ctx.deadlines?.remainingMs() ?? Number.POSITIVE_INFINITY) < delayMs + MIN_ATTEMPT_MS;
      if (failed >= limits.maxAttempts || outOfTime) {
        ctx.logger.warn(`${options.what}: gave up after ${attempt} attempt(s) (${reason})`, {
          reason,
          attempts: attempt,
        });
        throw new ServiceUnavailableError(unavailableMessage(reason), policy.retryAfterSeconds);
      }
      previous = reason;
      await timing.sleep(delayMs);
    }
  }
}

/** What the client reads: why to retry, nothing about our tables (`what` is for the log). */
function unavailableMessage(reason: string): string {
  return reason.startsWith('throttled')
    ? 'service busy, retry shortly'
    : 'the records involved are busy; retry shortly';
}
