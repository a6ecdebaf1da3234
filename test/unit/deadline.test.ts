import { describe, expect, it } from 'vitest';
import { ServiceUnavailableError } from '../../lib/domain/errors.js';
import { errorToHttp } from '../../lib/http/error-mapper.js';
import { DeadlineHttpHandler } from '../../lib/runtime/aws-clients.js';
import {
  CLEANUP_MARGIN_MS,
  DEADLINE_RESERVE_MS,
  DeadlineExceededError,
  Deadlines,
  MIN_ATTEMPT_MS,
} from '../../lib/runtime/deadline.js';
import type { RetryTiming } from '../../lib/runtime/retry-policy.js';
import { withRetry } from '../../lib/store/table/retry.js';

/** A monotonic clock that moves only when told to. */
function manualClock() {
  let nowMs = 1_000;
  return { nowMs: () => nowMs, advance: (ms: number) => void (nowMs += ms) };
}

describe('an invocation deadline', () => {
  it('leaves the reserve out of the remaining time, and is absent outside an invocation', async () => {
    const clock = manualClock();
    const deadlines = new Deadlines(clock.nowMs);
    expect(deadlines.remainingMs()).toBe(Number.POSITIVE_INFINITY);
    await deadlines.within(5000, async () => {
      expect(deadlines.remainingMs()).toBe(5000 - DEADLINE_RESERVE_MS);
      await Promise.resolve();
      clock.advance(1000);
      expect(deadlines.remainingMs()).toBe(4000 - DEADLINE_RESERVE_MS);
    });
    expect(deadlines.remainingMs()).toBe(Number.POSITIVE_INFINITY);
    // A caller without a Lambda context (the ops CLI, a test calling a use case) runs unbounded.
    deadlines.within(undefined, () => expect(deadlines.remainingMs()).toBe(Number.POSITIVE_INFINITY));
  });

  it('gives cleanup the reserve, less its margin, once work is out of time', async () => {
    const clock = manualClock();
    const deadlines = new Deadlines(clock.nowMs);
    await deadlines.within(3000, async () => {
      clock.advance(3000 - DEADLINE_RESERVE_MS + 1);
      expect(() => deadlines.check('work')).toThrow(DeadlineExceededError);
      await deadlines.cleanup(async () => {
        expect(deadlines.remainingMs()).toBe(DEADLINE_RESERVE_MS - CLEANUP_MARGIN_MS - 1);
        deadlines.check('release');
      });
    });
  });

  it('keeps concurrent invocations apart: each sees its own deadline across awaits', async () => {
    const deadlines = new Deadlines(manualClock().nowMs);
    const seen = async (remainingMs: number) =>
      deadlines.within(remainingMs, async () => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        return deadlines.remainingMs();
      });
    expect(await Promise.all([seen(10_000), seen(4000)])).toEqual([
      10_000 - DEADLINE_RESERVE_MS,
      4000 - DEADLINE_RESERVE_MS,
    ]);
  });

  it('is a 503 with Retry-After for the client', () => {
    const mapped = errorToHttp(new DeadlineExceededError('test'));
    expect(mapped.statusCode).toBe(503);
    expect(mapped.headers).toEqual({ 'Retry-After': '1' });
  });
});

describe('the SDK request handler under a deadline', () => {
  const handler = (deadlines: Deadlines) =>
    new DeadlineHttpHandler(deadlines, { connectionTimeout: 1000, requestTimeout: 2000 });
  // Nothing listens on port 9 (discard); an attempt that was sent would fail with a connection error instead.
  const request = {
    protocol: 'http:',
    hostname: '127.0.0.1',
    port: 9,
    method: 'POST',
    path: '/',
    query: {},
    headers: {},
  } as Parameters<DeadlineHttpHandler['handle']>[0];

  it('does not start an attempt that could not finish before the deadline', async () => {
    const clock = manualClock();
    const deadlines = new Deadlines(clock.nowMs);
    await deadlines.within(DEADLINE_RESERVE_MS + MIN_ATTEMPT_MS - 1, async () => {
      await expect(handler(deadlines).handle(request)).rejects.toBeInstanceOf(DeadlineExceededError);
    });
  });

  it('sends outside an invocation (the connection error is the network’s, not the deadline’s)', async () => {
    await expect(handler(new Deadlines()).handle(request)).rejects.not.toBeInstanceOf(DeadlineExceededError);
  });
});

describe('the store’s retries under a deadline', () => {
  it('give up when the next pause would pass the deadline, though attempts and the policy’s time are left', async () => {
    const clock = manualClock();
    const deadlines = new Deadlines(clock.nowMs);
    const timing: RetryTiming = {
      sleep: async (ms) => clock.advance(ms),
      random: () => 0.999,
      elapsedMs: clock.nowMs,
    };
    const policy = { maxAttempts: 100, baseDelayMs: 25, maxDelayMs: 1000, maxElapsedMs: 60_000, retryAfterSeconds: 1 };
    const ctx = { retry: { policy, timing }, logger: { warn: () => undefined }, deadlines };
    let calls = 0;
    await deadlines.within(DEADLINE_RESERVE_MS + 2000, async () => {
      const outcome = withRetry(ctx, { what: 'test' }, async () => {
        calls++;
        clock.advance(400);
        throw Object.assign(new Error('throttled'), { name: 'ThrottlingException' });
      });
      await expect(outcome).rejects.toBeInstanceOf(ServiceUnavailableError);
      // The fourth attempt began with 453 ms left and took 400; the next pause (399 ms) would leave no room.
      expect(deadlines.remainingMs()).toBe(53);
    });
    // 400 + 49 + 400 + 99 + 400 + 199 + 400 = 1947 ms of the 2000 the work had.
    expect(calls).toBe(4);
  });
});
