/**
 * Per-key request rate limits (design section 14). A limit is `rps` (sustained requests per second) and
 * `burst` (the most in any one second), counted in two fixed windows that one counter item (DynamoDB, on AWS)
 * or one map entry (in memory, `npm start`) holds together:
 *
 * - the sustained window: `SUSTAINED_WINDOW_SECONDS` aligned seconds, quota `rps × SUSTAINED_WINDOW_SECONDS`;
 * - the burst window: each second inside it, quota `burst`.
 *
 * A request is admitted when both have room, and then counts in both. Fixed windows because they are what one
 * conditional UpdateItem can enforce (a token bucket needs a read or a max(), which an update expression lacks),
 * and the in-memory counter uses the same windows so `npm start` answers exactly as a deployment does.
 */
export interface RateLimit {
  rps: number;
  burst: number;
}

export const SUSTAINED_WINDOW_SECONDS = 10;

/** The largest rps or burst ops may set: one counter item takes about 1,000 writes per second on AWS. */
export const MAX_RATE_LIMIT = 1000;

/** Why a limit is not valid (positive integers, burst at least rps, within MAX_RATE_LIMIT), or undefined. */
export function rateLimitProblem(limit: RateLimit): string | undefined {
  for (const [name, value] of Object.entries(limit)) {
    if (!Number.isInteger(value) || value < 1 || value > MAX_RATE_LIMIT) return `${name} must be an integer from 1 to ${MAX_RATE_LIMIT}`;
  }
  if (limit.burst < limit.rps) return 'burst must be at least rps (the most admitted in one second)';
  return undefined;
}

/** Where a request falls: its sustained window (start, in seconds) and its second inside it. */
export function windowOf(nowMs: number): { windowStart: number; second: number; nowSeconds: number } {
  const nowSeconds = Math.floor(nowMs / 1000);
  const windowStart = nowSeconds - (nowSeconds % SUSTAINED_WINDOW_SECONDS);
  return { windowStart, second: nowSeconds - windowStart, nowSeconds };
}

export type Admission = { admitted: true } | { admitted: false; refusal: RateLimitRefusal };

/** What a refused request is told: which window is full, when to retry, and the IETF fields. */
export interface RateLimitRefusal {
  /** Whole seconds until the full window ends (at least 1). */
  retryAfterSeconds: number;
  /** `RateLimit-Policy` (draft-ietf-httpapi-ratelimit-headers-09): both windows of the key's limit. */
  policy: string;
  /** `RateLimit`: the full window, nothing remaining, and its reset in seconds. */
  remaining: string;
}

/** Decides a request from the counts before it: `total` in its sustained window, `inSecond` in its second. */
export function decide(limit: RateLimit, counts: { total: number; inSecond: number }, nowMs: number): Admission {
  const burstFull = counts.inSecond >= limit.burst;
  const sustainedFull = counts.total >= limit.rps * SUSTAINED_WINDOW_SECONDS;
  if (!burstFull && !sustainedFull) return { admitted: true };
  const { windowStart } = windowOf(nowMs);
  const secondsLeft = (endMs: number) => Math.max(1, Math.ceil((endMs - nowMs) / 1000));
  // The sustained window, when full, is the longer wait: it is the one to name.
  const retryAfterSeconds = sustainedFull ? secondsLeft((windowStart + SUSTAINED_WINDOW_SECONDS) * 1000) : secondsLeft((Math.floor(nowMs / 1000) + 1) * 1000);
  return {
    admitted: false,
    refusal: {
      retryAfterSeconds,
      policy: `"burst";q=${limit.burst};w=1, "sustained";q=${limit.rps * SUSTAINED_WINDOW_SECONDS};w=${SUSTAINED_WINDOW_SECONDS}`,
      remaining: `"${sustainedFull ? 'sustained' : 'burst'}";r=0;t=${retryAfterSeconds}`,
    },
  };
}

/** Counts requests per key and admits them within their limit. */
export interface RateLimiter {
  admit(apiKey: string, limit: RateLimit, nowMs: number): Promise<Admission>;
}

/**
 * The counter of one process (`npm start`, tests): each key's current window in a map, no DynamoDB call. A
 * key's entry is replaced when its window passes, so the map holds one small entry per key seen.
 */
export function memoryRateLimiter(): RateLimiter {
  const windows = new Map<string, { windowStart: number; total: number; perSecond: number[] }>();
  return {
    async admit(apiKey, limit, nowMs) {
      const { windowStart, second } = windowOf(nowMs);
      let entry = windows.get(apiKey);
      if (!entry || entry.windowStart !== windowStart) {
        entry = { windowStart, total: 0, perSecond: new Array<number>(SUSTAINED_WINDOW_SECONDS).fill(0) };
        windows.set(apiKey, entry);
      }
      const admission = decide(limit, { total: entry.total, inSecond: entry.perSecond[second]! }, nowMs);
      if (admission.admitted) {
        entry.total += 1;
        entry.perSecond[second] = (entry.perSecond[second] ?? 0) + 1;
      }
      return admission;
    },
  };
}
