import { AsyncLocalStorage } from 'node:async_hooks';
import { ServiceUnavailableError } from '../domain/errors.js';

/**
 * Work stops this long before the invocation ends: the time left to answer (503 with Retry-After) and to release
 * the request's claim (its X-Request-Id), so a retry is processed rather than told the request is in progress.
 */
export const DEADLINE_RESERVE_MS = 1500;

/** Cleanup (storing the answer, releasing the claim) stops this long before the invocation ends. */
export const CLEANUP_MARGIN_MS = 250;

/**
 * A handler still running this long before the invocation ends is abandoned (middy's early timeout): its work
 * overran the deadline without waiting on anything the deadline bounds, and the error path needs the time left.
 */
export const BACKSTOP_MS = 1000;

/** An SDK attempt is not started with less than this left: it could not finish, and its abort would only cost. */
export const MIN_ATTEMPT_MS = 50;

/**
 * The invocation ran out of time for its work: nothing more is attempted, the client hears 503 with Retry-After
 * (a subclass of the service's "try again" answer), and the request's claim is released.
 */
export class DeadlineExceededError extends ServiceUnavailableError {
  constructor(readonly what: string) {
    super('the request ran out of time; retry shortly', 1);
    this.name = 'DeadlineExceededError';
  }
}

/** The two ends of one invocation's time, on the deadlines' monotonic clock. */
interface Bounds {
  /** Work (SDK attempts, store retries, a hot account's wait) ends here. */
  workEndMs: number;
  /** Cleanup ends here, just before the invocation does. */
  cleanupEndMs: number;
}

/**
 * Every invocation's deadline, the way Go's and gRPC's contexts carry one down a call: the edge (the API handler,
 * the Lambda edge) runs each invocation `within` its remaining time, and whatever waits below it (the SDK clients'
 * request handler, the store's retries, a hot account's queue) asks `remainingMs()`. Carried by AsyncLocalStorage
 * because the SDK's request handler sees only the request, not the caller that sent it; the storage is the
 * context's own (built at the edge and passed in), not a module's. Outside any invocation (the ops CLI, a test
 * calling a use case directly) there is no deadline.
 */
export class Deadlines {
  readonly #bounds = new AsyncLocalStorage<Bounds>();

  /** `nowMs` is a monotonic clock (not the service clock, which tests move). */
  constructor(
    readonly nowMs: () => number = () => performance.now(),
    readonly reserveMs = DEADLINE_RESERVE_MS,
  ) {}

  /**
   * Runs `work` as an invocation with `remainingMs` left (Lambda's `getRemainingTimeInMillis()`): its work must
   * end `reserveMs` before that. Without a remaining time (a caller with no Lambda context) `work` runs unbounded.
   */
  within<T>(remainingMs: number | undefined, work: () => T): T {
    if (remainingMs === undefined || !Number.isFinite(remainingMs)) return work();
    const endMs = this.nowMs() + remainingMs;
    return this.#bounds.run({ workEndMs: endMs - this.reserveMs, cleanupEndMs: endMs - CLEANUP_MARGIN_MS }, work);
  }

  /** Milliseconds left for work (negative once past); Infinity outside an invocation. */
  remainingMs(): number {
    const bounds = this.#bounds.getStore();
    return bounds ? bounds.workEndMs - this.nowMs() : Number.POSITIVE_INFINITY;
  }

  /**
   * Runs `cleanup` with the reserve as its time: what a request does after its work ran out (store its answer,
   * release its claim) may use the time kept for it, and no more.
   */
  cleanup<T>(cleanup: () => T): T {
    const bounds = this.#bounds.getStore();
    if (!bounds) return cleanup();
    return this.#bounds.run({ workEndMs: bounds.cleanupEndMs, cleanupEndMs: bounds.cleanupEndMs }, cleanup);
  }

  /** Throws `DeadlineExceededError` when less than `neededMs` are left for `what`. */
  check(what: string, neededMs = 0): void {
    if (this.remainingMs() < neededMs) throw new DeadlineExceededError(what);
  }
}

/** The remaining time of a Lambda context, when it has one (tests and local runtimes may give none). */
export function remainingTimeOf(context: { getRemainingTimeInMillis?: () => number } | undefined): number | undefined {
  return typeof context?.getRemainingTimeInMillis === 'function' ? context.getRemainingTimeInMillis() : undefined;
}
