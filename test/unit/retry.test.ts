import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ServiceUnavailableError } from '../../lib/domain/errors.js';
import { ThrottledError, retryReason, withRetry } from '../../lib/store/table/retry.js';
import {
  DEFAULT_RETRY_POLICY,
  backoffCapMs,
  backoffDelayMs,
  type RetryPolicy,
  type RetryTiming,
} from '../../lib/runtime/retry-policy.js';

const policy: RetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 25,
  maxDelayMs: 1000,
  maxElapsedMs: 10_000,
  retryAfterSeconds: 2,
};

/** A timing whose clock only moves when the helper sleeps (plus what `work` spends per attempt). */
function fakeTiming(random: () => number = () => 0.5) {
  const slept: number[] = [];
  let nowMs = 0;
  const timing: RetryTiming & { slept: number[]; spend(ms: number): void } = {
    slept,
    sleep: async (ms) => {
      slept.push(ms);
      nowMs += ms;
    },
    random,
    elapsedMs: () => nowMs,
    spend: (ms) => {
      nowMs += ms;
    },
  };
  return timing;
}

function retryContext(timing: RetryTiming, overrides: Partial<RetryPolicy> = {}) {
  const warnings: string[] = [];
  return {
    warnings,
    ctx: {
      retry: { policy: { ...policy, ...overrides }, timing },
      logger: { warn: (message: string) => void warnings.push(message) },
    },
  };
}

const cancelled = (...codes: string[]) =>
  new TransactionCanceledException({
    message: `Transaction cancelled [${codes.join(', ')}]`,
    $metadata: {},
    CancellationReasons: codes.map((Code) => ({ Code })),
  });
const named = (name: string) => Object.assign(new Error(name), { name, $metadata: {} });

describe('backoff', () => {
  it('doubles the cap per failed attempt from the base and stops at the maximum', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 10].map((attempt) => backoffCapMs(policy, attempt))).toEqual([
      50, 100, 200, 400, 800, 1000, 1000, 1000,
    ]);
  });

  it('draws each pause uniformly below the cap: never negative, never the cap itself, never above the maximum', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, draw) => {
          const delay = backoffDelayMs(policy, attempt, () => draw);
          expect(Number.isInteger(delay)).toBe(true);
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(delay).toBeLessThan(backoffCapMs(policy, attempt));
          expect(delay).toBeLessThan(policy.maxDelayMs);
        },
      ),
    );
    // The jitter spans the whole range: the lowest draw waits nothing, the highest nearly the cap.
    expect(backoffDelayMs(policy, 3, () => 0)).toBe(0);
    expect(backoffDelayMs(policy, 3, () => 0.9999)).toBe(199);
  });

  it('keeps the default policy inside a request: its pauses add up to well under a second and its time bound under API Gateway’s 29 s', () => {
    const worst = Array.from({ length: DEFAULT_RETRY_POLICY.maxAttempts - 1 }, (_, i) =>
      backoffCapMs(DEFAULT_RETRY_POLICY, i + 1),
    ).reduce((a, b) => a + b, 0);
    expect(worst).toBeLessThan(1000);
    expect(DEFAULT_RETRY_POLICY.maxElapsedMs).toBeLessThan(29_000);
  });
});

describe('what is retried', () => {
  it.each([
    ['a cancellation for a conflict', cancelled('None', 'TransactionConflict'), 'conflict'],
    ['a cancellation for throttling', cancelled('ThrottlingError', 'None'), 'throttled'],
    ['a cancellation for provisioned throughput', cancelled('None', 'ProvisionedThroughputExceeded'), 'throttled'],
    ['a cancellation for a conflict and throttling', cancelled('TransactionConflict', 'ThrottlingError'), 'throttled'],
    ['ProvisionedThroughputExceededException', named('ProvisionedThroughputExceededException'), 'throttled'],
    ['ThrottlingException', named('ThrottlingException'), 'throttled'],
    ['RequestLimitExceeded', named('RequestLimitExceeded'), 'throttled'],
    [
      'TransactionConflictException (a single write meeting a transaction)',
      named('TransactionConflictException'),
      'conflict',
    ],
    ['keys left unprocessed', new ThrottledError('3 keys left unprocessed'), 'throttled'],
  ])('retries %s', (_name, error, reason) => {
    expect(retryReason(error)).toBe(reason);
  });

  it.each([
    ['a failed condition', cancelled('ConditionalCheckFailed')],
    ['a failed condition beside a conflict', cancelled('TransactionConflict', 'ConditionalCheckFailed')],
    ['a failed condition beside throttling', cancelled('ConditionalCheckFailed', 'ThrottlingError')],
    ['a validation failure inside a transaction', cancelled('None', 'ValidationError')],
    ['a cancellation without reasons', cancelled()],
    [
      'ConditionalCheckFailedException',
      new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} }),
    ],
    ['a timeout (the SDK retried it already)', named('TimeoutError')],
    ['a validation exception', named('ValidationException')],
    ['a bug', new TypeError('x is undefined')],
  ])('never retries %s', (_name, error) => {
    expect(retryReason(error)).toBeUndefined();
  });
});

describe('withRetry', () => {
  it('tries again after each retryable failure, pausing as the policy draws, and returns the first success', async () => {
    const timing = fakeTiming(() => 0.5);
    const { ctx } = retryContext(timing);
    const seen: [number, string | undefined][] = [];
    const result = await withRetry(ctx, { what: 'test' }, async (attempt, previous) => {
      seen.push([attempt, previous]);
      if (attempt === 1) throw cancelled('TransactionConflict');
      if (attempt === 2) throw named('ThrottlingException');
      return 'done';
    });
    expect(result).toBe('done');
    expect(seen).toEqual([
      [1, undefined],
      [2, 'conflict'],
      [3, 'throttled'],
    ]);
    expect(timing.slept).toEqual([25, 50]);
  });

  it('gives up after maxAttempts with the service’s 503 (its Retry-After), having paused between attempts only', async () => {
    const timing = fakeTiming(() => 0.999);
    const { ctx, warnings } = retryContext(timing);
    let calls = 0;
    const outcome = withRetry(ctx, { what: 'price read' }, async () => {
      calls++;
      throw named('ProvisionedThroughputExceededException');
    });
    await expect(outcome).rejects.toBeInstanceOf(ServiceUnavailableError);
    await expect(outcome).rejects.toMatchObject({ retryAfterSeconds: 2, message: 'service busy, retry shortly' });
    expect(calls).toBe(5);
    expect(timing.slept).toHaveLength(4);
    timing.slept.forEach((ms, i) => expect(ms).toBeLessThan(backoffCapMs(policy, i + 1)));
    expect(warnings).toEqual([expect.stringContaining('price read: gave up after 5 attempt(s)')]);
  });

  it('tells a conflict that never resolves apart from throttling in what the client reads', async () => {
    const { ctx } = retryContext(fakeTiming());
    await expect(
      withRetry(ctx, { what: 'transaction' }, async () => {
        throw cancelled('TransactionConflict');
      }),
    ).rejects.toMatchObject({ message: 'the records involved are busy; retry shortly' });
  });

  it('never starts an attempt past the time bound, even with attempts left', async () => {
    const timing = fakeTiming(() => 0.999);
    const { ctx } = retryContext(timing, { maxAttempts: 100, maxElapsedMs: 3000 });
    let calls = 0;
    const outcome = withRetry(ctx, { what: 'test' }, async () => {
      calls++;
      timing.spend(900); // each attempt takes 0.9 s (the SDK's own retries inside it)
      throw named('ThrottlingException');
    });
    await expect(outcome).rejects.toBeInstanceOf(ServiceUnavailableError);
    // 0.9 + 0.049 + 0.9 + 0.099 + 0.9 = 2.848 s; the next pause (199 ms) would pass 3 s.
    expect(calls).toBe(3);
    expect(timing.elapsedMs()).toBeLessThanOrEqual(3000);
  });

  it('propagates anything else at once, untouched: a failed condition is never retried blindly', async () => {
    const timing = fakeTiming();
    const { ctx } = retryContext(timing);
    const failed = cancelled('ConditionalCheckFailed');
    let calls = 0;
    const outcome = withRetry(ctx, { what: 'test' }, async () => {
      calls++;
      throw failed;
    });
    await expect(outcome).rejects.toBe(failed);
    expect(calls).toBe(1);
    expect(timing.slept).toEqual([]);
  });

  it('counts a reason with a budget of its own apart from the others, pausing by its own numbers', async () => {
    const timing = fakeTiming(() => 0.999);
    const { ctx } = retryContext(timing);
    const reasons = ['stale', 'conflict', 'stale', 'stale', 'conflict', 'stale'];
    let calls = 0;
    const outcome = withRetry(
      ctx,
      {
        what: 'test',
        classify: (error) => (error instanceof Error && error.message === 'stale' ? 'stale' : retryReason(error)),
        reasons: { stale: { maxAttempts: 10, maxDelayMs: 60 } },
      },
      async () => {
        // The listed failures, then conflicts only.
        if (reasons[calls++] === 'stale') throw new Error('stale');
        throw cancelled('TransactionConflict');
      },
    );
    await expect(outcome).rejects.toBeInstanceOf(ServiceUnavailableError);
    // Conflicts: 2 in the list, then 3 more reach the policy's 5; the stale reads' 4 count apart.
    expect(calls).toBe(reasons.length + 3);
    // Stale pauses below 50, then below their own 60 cap (not 100, 200); conflicts' below 50, 100, 200, 400.
    expect(timing.slept).toEqual([49, 49, 59, 59, 99, 59, 199, 399]);
  });

  it('retries what a caller classifies as retryable, and a per-call policy overrides the context’s', async () => {
    const { ctx } = retryContext(fakeTiming());
    let calls = 0;
    const outcome = withRetry(
      ctx,
      {
        what: 'test',
        policy: { maxAttempts: 8 },
        classify: (error) => ((error as Error).message === 'stale' ? 'stale' : undefined),
      },
      async () => {
        calls++;
        throw new Error('stale');
      },
    );
    await expect(outcome).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(calls).toBe(8);
  });
});
