/**
 * When a webhook delivery is tried again, and what an answer means. Pure: the sender
 * reports what happened, these rules decide the next step.
 */

/** Seconds after each failed attempt before the next: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h. */
export const DEFAULT_RETRY_SCHEDULE_SECONDS: readonly number[] = [
  5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400,
];

/** A 2xx must arrive within this; longer is a failed attempt. */
export const DELIVERY_TIMEOUT_MS = 15_000;

/** An endpoint whose every attempt has failed for this long is disabled. */
const ENDPOINT_FAILURE_DISABLE_MS = 5 * 24 * 60 * 60 * 1000;

/** A `Retry-After` is honoured up to this, so a receiver can't park a delivery for longer than the schedule. */
const MAX_RETRY_AFTER_SECONDS = 24 * 60 * 60;

/** `WEBHOOK_RETRY_SCHEDULE_SECONDS`: comma-separated positive numbers of seconds. */
export function parseRetrySchedule(text: string | undefined): number[] {
  if (text === undefined || text.trim() === '') return [...DEFAULT_RETRY_SCHEDULE_SECONDS];
  const parts = text.split(',').map((part) => part.trim());
  const seconds = parts.map(Number);
  if (parts.some((part) => !/^\d+(\.\d+)?$/.test(part)) || seconds.some((value) => !(value > 0))) {
    throw new Error(`WEBHOOK_RETRY_SCHEDULE_SECONDS: expected comma-separated positive seconds, got "${text}"`);
  }
  return seconds;
}

/** What one attempt came to. */
export type AttemptResult =
  | { kind: 'response'; statusCode: number; retryAfter?: string | null }
  | { kind: 'error'; error: string };

type AttemptVerdict =
  | { outcome: 'succeeded' }
  /** 410 Gone: the receiver asks us to stop; the endpoint is disabled. */
  | { outcome: 'gone' }
  | { outcome: 'failed'; retryAfterSeconds?: number };

/** Seconds to wait from a `Retry-After` (delta-seconds or an HTTP date), if it says anything usable. */
export function retryAfterSeconds(value: string | null | undefined, nowMs: number): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Math.min(Number(trimmed), MAX_RETRY_AFTER_SECONDS);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.min(Math.max(0, Math.ceil((date - nowMs) / 1000)), MAX_RETRY_AFTER_SECONDS);
}

/** 2xx succeeds; 410 stops; everything else (3xx included: redirects are not followed) is a failure. */
export function judgeAttempt(result: AttemptResult, nowMs: number): AttemptVerdict {
  if (result.kind === 'error') return { outcome: 'failed' };
  const { statusCode } = result;
  if (statusCode >= 200 && statusCode < 300) return { outcome: 'succeeded' };
  if (statusCode === 410) return { outcome: 'gone' };
  if (statusCode === 429 || statusCode === 503) {
    const wait = retryAfterSeconds(result.retryAfter, nowMs);
    return wait === undefined ? { outcome: 'failed' } : { outcome: 'failed', retryAfterSeconds: wait };
  }
  return { outcome: 'failed' };
}

/**
 * When to try again after failed attempt number `attempt` (1 = the first try), or undefined when the
 * schedule is exhausted. The scheduled delay gets +/-20 % jitter so receivers recovering from an outage are
 * not hit by every delivery at the same instant; a `Retry-After` is a floor under it.
 */
export function nextAttemptDelayMs(
  schedule: readonly number[],
  attempt: number,
  retryAfter: number | undefined,
  random: () => number = Math.random,
): number | undefined {
  const base = schedule[attempt - 1];
  if (base === undefined) return undefined;
  const jittered = base * 1000 * (0.8 + 0.4 * random());
  return Math.round(Math.max(jittered, (retryAfter ?? 0) * 1000));
}

/** Whether an endpoint failing since `failingSinceMs` (no success in between) has failed long enough to disable. */
export function failedLongEnoughToDisable(failingSinceMs: number | null, nowMs: number): boolean {
  return failingSinceMs !== null && nowMs - failingSinceMs >= ENDPOINT_FAILURE_DISABLE_MS;
}
