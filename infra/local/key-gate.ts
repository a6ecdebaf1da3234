import pLimit, { type LimitFunction } from 'p-limit';

/** `npm start`'s share per key while keys share the machine, when LOCAL_REQUESTS_PER_KEY is unset. */
export const DEFAULT_REQUESTS_PER_KEY = 1;

/** The share per key `npm start` (and the benchmark, which measures what it serves) runs with. */
export function requestsPerKeyFrom(env: Record<string, string | undefined>): number {
  return env.LOCAL_REQUESTS_PER_KEY ? Number(env.LOCAL_REQUESTS_PER_KEY) : DEFAULT_REQUESTS_PER_KEY;
}

/** A key that sent a request this recently still counts as present (a client between two calls). */
export const PRESENT_FOR_MS = 1_000;

/**
 * Fair shares for the one process `npm start` serves every platform from. On AWS each request has a Lambda
 * of its own and DynamoDB partitions by platform, so one platform's burst does not delay another's; here
 * they share an event loop and one DynamoDB Local on a few cores. So requests are admitted per API key:
 *
 * - a key alone (no other key sent anything in the last second) runs as many requests at once as it sends:
 *   there is nobody to protect, and a single platform's parallel calls stay parallel;
 * - while other keys are present, every key runs at most `perKey` (1 by default) at once: each key's further
 *   requests wait in line behind their own key, and another key's request shares the machine with one of
 *   theirs, not with a burst (isolation_ratio in docs/performance.md: 2 with one each, 4.2
 *   with two, 12 with four);
 * - a key with requests waiting in its line yields half the time to a present key with none waiting: after
 *   each of its requests, its next starts only once as long again has passed. A platform calling one request
 *   at a time (an app serving its users) otherwise always finds a batch's request in flight beside its own,
 *   and waits for that request's share of the two cores (its p50 2.0-2.5 times its idle one); now it often
 *   runs alone (1.3-1.7 times). The batch keeps at least half the time it had; keys that all have a backlog
 *   share as before, so no capacity is left idle among them.
 *
 * The key is the X-SVC-API-KEY header as sent, before the signature is checked: a request presenting a
 * key it doesn't own only waits in that key's line (and is refused when its turn comes).
 */
export class KeyGate {
  private readonly lines = new Map<string, LimitFunction>();
  private readonly lastSeenMs = new Map<string, number>();
  /** When a key with a backlog may start its next request (it yields to keys with none, see above). */
  private readonly resumeAtMs = new Map<string, number>();

  constructor(
    private readonly perKey: number,
    private readonly nowMs: () => number = () => performance.now(),
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  ) {
    if (!Number.isInteger(perKey) || perKey < 1)
      throw new Error(`requests per API key must be a positive integer, not ${perKey}`);
  }

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const share = this.arrive(key);
    const line = this.lines.get(key) ?? pLimit(share);
    this.lines.set(key, line);
    // Every line follows the current share; requests already running finish, the next start within it.
    for (const each of this.lines.values()) each.concurrency = share;
    try {
      return await line(async () => {
        const waitMs = (this.resumeAtMs.get(key) ?? 0) - this.nowMs();
        if (waitMs > 0) await this.sleep(waitMs);
        const startedMs = this.nowMs();
        try {
          return await work();
        } finally {
          this.yieldIfBacklogged(key, line, this.nowMs() - startedMs);
        }
      });
    } finally {
      // A key with nothing running or waiting keeps no line (keys never seen again leave nothing behind).
      // (Its last request found none waiting, so `yieldIfBacklogged` already dropped its resume time.)
      if (line.activeCount === 0 && line.pendingCount === 0 && this.lines.get(key) === line) this.lines.delete(key);
    }
  }

  /**
   * After a request of `key` that took `tookMs`: while more of the key's requests wait and another key
   * present has none waiting, the next of them starts `tookMs` from now at the earliest.
   */
  private yieldIfBacklogged(key: string, line: LimitFunction, tookMs: number): void {
    const now = this.nowMs();
    const someoneWithoutBacklog = [...this.lastSeenMs].some(
      ([other, seenMs]) =>
        other !== key && now - seenMs <= PRESENT_FOR_MS && (this.lines.get(other)?.pendingCount ?? 0) === 0,
    );
    if (line.pendingCount > 0 && someoneWithoutBacklog) this.resumeAtMs.set(key, now + tookMs);
    else this.resumeAtMs.delete(key);
  }

  /** Notes the key's arrival; the share per key from now on: no limit alone, `perKey` each with company. */
  private arrive(key: string): number {
    const now = this.nowMs();
    this.lastSeenMs.set(key, now);
    for (const [other, seenMs] of this.lastSeenMs) {
      if (now - seenMs > PRESENT_FOR_MS && !this.lines.has(other)) this.lastSeenMs.delete(other);
    }
    return this.lastSeenMs.size > 1 ? this.perKey : Number.POSITIVE_INFINITY;
  }
}
