/**
 * The one retry policy of the store (lib/store/README.md, "Retries"): which DynamoDB failures are worth another attempt,
 * how long to wait before it, and when to give up with a 503 the client may retry.
 *
 * How it composes with the SDK's own retries: every DynamoDB call already goes through the SDK's standard
 * retry strategy, AWS_MAX_ATTEMPTS attempts of that one request (throttling exceptions and network errors,
 * its own backoff, each attempt bounded by AWS_REQUEST_TIMEOUT_MS). This layer sits above it and repeats a
 * whole store operation: after the SDK gave up on a throttling exception, or after answers the SDK never
 * retries because they are not errors of the request (a transaction cancelled by a conflict or by
 * throttling, a batch read leaving keys unprocessed). So a call costs at most `maxAttempts` x
 * AWS_MAX_ATTEMPTS requests, and no new attempt starts once `maxElapsedMs` have passed, nor when it could not
 * start before the invocation's deadline (`deadline.ts`, which also bounds each SDK attempt). A timeout (a
 * stalled dependency) is not retried here: the SDK retried it already, and waiting longer only delays the 503.
 */
export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** The pause before attempt n+1 is drawn uniformly from [0, min(maxDelayMs, baseDelayMs x 2^n)) ("full jitter"). */
  baseDelayMs: number;
  maxDelayMs: number;
  /** No attempt starts later than this after the first began; the invocation's deadline may end them sooner. */
  maxElapsedMs: number;
  /** The 503's Retry-After when the attempts run out. */
  retryAfterSeconds: number;
}

/** Where the pauses come from: real timers in the service, instant ones in tests that don't measure time. */
export interface RetryTiming {
  sleep(ms: number): Promise<void>;
  /** Uniform in [0, 1): the jitter. */
  random(): number;
  /** A monotonic clock for the elapsed-time bound (not the service clock, which tests move). */
  elapsedMs(): number;
}

/** The policy and the timing a context carries (`ctx.retry`). */
export interface Retrying {
  policy: RetryPolicy;
  timing: RetryTiming;
}

/**
 * 5 attempts: at most 50 + 100 + 200 + 400 ms of pauses (half that on average), so a conflict between a
 * handful of concurrent bookings of one account resolves well inside a request; 10 s bounds the slow case
 * (the SDK's throttling backoff inside each attempt), and the invocation's deadline bounds whatever is left.
 */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  maxAttempts: 5,
  baseDelayMs: 25,
  maxDelayMs: 1000,
  maxElapsedMs: 10_000,
  retryAfterSeconds: 1,
});

export const realTiming: RetryTiming = {
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: Math.random,
  elapsedMs: () => performance.now(),
};

/** The upper bound of the pause after failed attempt `attempt` (1 = the first), before the jitter draw. */
export function backoffCapMs(policy: RetryPolicy, attempt: number): number {
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
}

/** The pause after failed attempt `attempt`: full jitter below the cap, so racing callers spread out. */
export function backoffDelayMs(policy: RetryPolicy, attempt: number, random: () => number): number {
  return Math.floor(random() * backoffCapMs(policy, attempt));
}
