/**
 * Per-key request rate limits. A limit is `rps` (sustained requests per second) and
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
const MAX_RATE_LIMIT = 1000;

/** Why a limit is not valid (positive integers, burst at least rps, within MAX_RATE_LIMIT), or undefined. */
export function rateLimitProblem(limit: RateLimit): string | undefined {
  for (const [name, value] of Object.entries(limit)) {
    if (!Number.isInteger(value) || value < 1 || value > MAX_RATE_LIMIT)
      return `${name} must be an integer from 1 to ${MAX_RATE_LIMIT}`;
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
  /** When the full window ends (ms). */
  resetsAtMs: number;
}

/** Decides a request from the counts before it: `total` in its sustained window, `inSecond` in its second. */
export function decide(limit: RateLimit, counts: { total: number; inSecond: number }, nowMs: number): Admission {
  const burstFull = counts.inSecond >= limit.burst;
  const sustainedFull = counts.total >= limit.rps * SUSTAINED_WINDOW_SECONDS;
  if (!burstFull && !sustainedFull) return { admitted: true };
  const { windowStart } = windowOf(nowMs);
  // The sustained window, when full, is the longer wait: it is the one to name.
  const resetsAtMs = sustainedFull
    ? (windowStart + SUSTAINED_WINDOW_SECONDS) * 1000
    : (Math.floor(nowMs / 1000) + 1) * 1000;
  const policy = `"burst";q=${limit.burst};w=1, "sustained";q=${limit.rps * SUSTAINED_WINDOW_SECONDS};w=${SUSTAINED_WINDOW_SECONDS}`;
  return { admitted: false, refusal: refusal(sustainedFull ? 'sustained' : 'burst', policy, resetsAtMs, nowMs) };
}

function refusal(window: string, policy: string, resetsAtMs: number, nowMs: number): RateLimitRefusal {
  const retryAfterSeconds = Math.max(1, Math.ceil((resetsAtMs - nowMs) / 1000));
  return { retryAfterSeconds, policy, remaining: `"${window}";r=0;t=${retryAfterSeconds}`, resetsAtMs };
}

/** Keys remembered as full at once: past this, expired entries are dropped before another is added. */
const MAX_REMEMBERED_FULL = 10_000;

/**
 * Keys this process saw refused, until their full window ends: a further request of theirs in that time is
 * refused from memory, before its key is read or its signature computed (what WAF does on AWS, by the header).
 * It would be refused once authenticated anyway; unauthenticated, it learns only that the key is over its
 * limit, and it counts nothing.
 */
function fullWindows() {
  const full = new Map<string, RateLimitRefusal>();
  return {
    note(apiKey: string, admission: Admission): Admission {
      if (admission.admitted) return admission;
      if (full.size >= MAX_REMEMBERED_FULL) {
        for (const [key, entry] of full)
          if (entry.resetsAtMs <= admission.refusal.resetsAtMs - SUSTAINED_WINDOW_SECONDS * 1000) full.delete(key);
      }
      if (full.size < MAX_REMEMBERED_FULL) full.set(apiKey, admission.refusal);
      return admission;
    },
    check(apiKey: string, nowMs: number): RateLimitRefusal | undefined {
      const entry = full.get(apiKey);
      if (!entry) return undefined;
      if (entry.resetsAtMs <= nowMs) {
        full.delete(apiKey);
        return undefined;
      }
      const window = entry.remaining.slice(1, entry.remaining.indexOf('"', 1));
      return refusal(window, entry.policy, entry.resetsAtMs, nowMs);
    },
  };
}

/** Counts requests per key and admits them within their limit. */
export interface RateLimiter {
  admit(apiKey: string, limit: RateLimit, nowMs: number): Promise<Admission>;
  /** The refusal of a key this process saw over its limit, while its full window lasts (no call, no count). */
  knownFull(apiKey: string, nowMs: number): RateLimitRefusal | undefined;
}

/** A limiter from a counting function, remembering the keys it refused until their windows end. */
export function rememberingFull(
  count: (apiKey: string, limit: RateLimit, nowMs: number) => Promise<Admission>,
): RateLimiter {
  const full = fullWindows();
  return {
    admit: async (apiKey, limit, nowMs) => full.note(apiKey, await count(apiKey, limit, nowMs)),
    knownFull: (apiKey, nowMs) => full.check(apiKey, nowMs),
  };
}

/**
 * The counter of one process (`npm start`, tests): each key's current window in a map, no DynamoDB call. A
 * key's entry is replaced when its window passes, so the map holds one small entry per key seen.
 */
export function memoryRateLimiter(): RateLimiter {
  const windows = new Map<string, { windowStart: number; total: number; perSecond: number[] }>();
  return rememberingFull(async (apiKey, limit, nowMs) => {
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
  });
}
