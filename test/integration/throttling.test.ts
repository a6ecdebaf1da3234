import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import type { clientWith } from '../support/context.js';
import { serviceWith as faultyService } from '../support/faults.js';
import { fund, transferBody, usdBalancesOf } from '../support/ledger.js';
import { lostAnswer, nothingProcessed } from '../support/raw-response.js';
import { newPlatform, type TestPlatform } from '../support/service.js';

/**
 * DynamoDB throttling, injected with SDK middleware (DynamoDB Local never throttles). A fault at the
 * `deserialize` step sits inside the SDK's own retry loop and sees each of its attempts; at `initialize` it
 * sees each call of the store once, so only the store's retry policy (`lib/store/table/retry.ts`, 5 attempts)
 * retries it.
 */
type Middleware = Parameters<typeof clientWith>[0];

/** The SDK's own attempts per call, as the service's clients have them by default (AWS_MAX_ATTEMPTS). */
const SDK_ATTEMPTS = 3;

const serviceWith = (middleware: Middleware, name: string, step: 'initialize' | 'deserialize') =>
  faultyService(middleware, name, step, { maxAttempts: SDK_ATTEMPTS });

const throttlingException = () =>
  Object.assign(new Error('The level of configured provisioned throughput for the table was exceeded.'), {
    name: 'ProvisionedThroughputExceededException',
    $metadata: { httpStatusCode: 400 },
  });

/** What DynamoDB answers a transaction when one of its items' partitions is throttled: a cancellation, which the SDK never retries. */
const throttledCancellation = (items: number) =>
  new TransactionCanceledException({
    message: 'Transaction cancelled, please refer cancellation reasons for specific reasons [None, ThrottlingError]',
    $metadata: {},
    CancellationReasons: Array.from({ length: items }, (_, i) => ({ Code: i === 1 ? 'ThrottlingError' : 'None' })),
  });

/** Fails the first `times` calls of `command` with `fault` (forever when `times` is Infinity), counting every call. */
function failing(command: string, times: number, fault: (input: any) => Error, step: 'initialize' | 'deserialize') {
  const calls = { count: 0 };
  let left = times;
  const via = serviceWith(
    (next, context) => async (args) => {
      if (context.commandName !== command) return next(args);
      calls.count++;
      if (left > 0) {
        left--;
        throw fault(args.input);
      }
      return next(args);
    },
    `throttle${command}`,
    step,
  );
  return { calls, via };
}

const transfer = (platform: TestPlatform, amount: string) =>
  transferBody(platform, { to_account_label: 'other', amount });

async function fundedPlatform(): Promise<TestPlatform> {
  const platform = await newPlatform();
  await fund(platform.participantCode, 'USD', '10');
  // The receiving account exists already, so the transfer is one transaction (no account-opening swap).
  await fund(platform.participantCode, 'USD', '1', 'other');
  return platform;
}

async function transfersOf(platform: TestPlatform): Promise<number> {
  return (await platform.get('/transfers')).body.count;
}

describe('a booking under throttling', () => {
  it('is retried when DynamoDB cancels its transaction for throttling, and books exactly once', async () => {
    const platform = await fundedPlatform();
    const { calls, via } = failing(
      'TransactWriteItemsCommand',
      3,
      (input) => throttledCancellation(input.TransactItems.length),
      'deserialize',
    );
    const response = await platform.post('/transfers', transfer(platform, '4'), { via });
    expect(response.status).toBe(201);
    // The SDK does not retry a cancellation: each attempt is the store's.
    expect(calls.count).toBe(4);
    expect(await usdBalancesOf(platform, 'general', 'other')).toEqual(['6.00', '5.00']);
    expect(await transfersOf(platform)).toBe(1);
  });

  it('is retried past the SDK’s own attempts when throttling exceptions outlast them, and books exactly once', async () => {
    const platform = await fundedPlatform();
    // The SDK's attempts of the store's first call throttled, then the first of its second call.
    const { calls, via } = failing('TransactWriteItemsCommand', SDK_ATTEMPTS + 1, throttlingException, 'deserialize');
    const response = await platform.post('/transfers', transfer(platform, '4'), { via });
    expect(response.status).toBe(201);
    expect(calls.count).toBe(SDK_ATTEMPTS + 2);
    expect(await usdBalancesOf(platform, 'general', 'other')).toEqual(['6.00', '5.00']);
    expect(await transfersOf(platform)).toBe(1);
  });

  it('does not book twice when an attempt committed with its answer lost and the SDK’s retries were then throttled', async () => {
    const platform = await fundedPlatform();
    const tokens: string[] = [];
    let call = 0;
    const via = serviceWith(
      (next, context) => async (args) => {
        if (context.commandName !== 'TransactWriteItemsCommand') return next(args);
        tokens.push((args.input as { ClientRequestToken: string }).ClientRequestToken);
        call++;
        if (call === 1) {
          // Committed, but the answer never arrives; the SDK retries the same request...
          throw lostAnswer(await next(args));
        }
        // ...and its remaining attempts are throttled, so the SDK gives up on a call that did commit.
        if (call <= SDK_ATTEMPTS) throw throttlingException();
        return next(args);
      },
      'lostThenThrottled',
      'deserialize',
    );
    const response = await platform.post('/transfers', transfer(platform, '4'), { via });
    expect(response.status).toBe(201);
    // The store resent that very request, token included: DynamoDB recognised it as committed.
    expect(tokens).toHaveLength(SDK_ATTEMPTS + 1);
    expect(new Set(tokens).size).toBe(1);
    expect(await usdBalancesOf(platform, 'general', 'other')).toEqual(['6.00', '5.00']);
    expect(await transfersOf(platform)).toBe(1);
  });

  it('answers 503 with Retry-After when throttling never ends, having booked nothing; a later retry of the request books once', async () => {
    const platform = await fundedPlatform();
    const { calls, via } = failing('TransactWriteItemsCommand', Infinity, throttlingException, 'initialize');
    const requestId = crypto.randomUUID();
    const response = await platform.post('/transfers', transfer(platform, '4'), {
      via,
      headers: { 'X-Request-Id': requestId },
    });
    expect(response.status).toBe(503);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(response.body).toEqual({ errors: ['service busy, retry shortly'] });
    // Bounded: the policy's 5 attempts, no more.
    expect(calls.count).toBe(5);
    expect(await usdBalancesOf(platform, 'general', 'other')).toEqual(['10.00', '1.00']);
    expect(await transfersOf(platform)).toBe(0);

    // Throttling over: the client's retry of the same request books it, once.
    const retry = await platform.post('/transfers', transfer(platform, '4'), {
      headers: { 'X-Request-Id': requestId },
    });
    expect(retry.status).toBe(201);
    expect(await usdBalancesOf(platform, 'general', 'other')).toEqual(['6.00', '5.00']);
  });

  it('answers 503 when every attempt’s transaction is cancelled for throttling, having booked nothing', async () => {
    const platform = await fundedPlatform();
    const { calls, via } = failing(
      'TransactWriteItemsCommand',
      Infinity,
      (input) => throttledCancellation(input.TransactItems.length),
      'deserialize',
    );
    const response = await platform.post('/transfers', transfer(platform, '4'), { via });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBeTruthy();
    expect(calls.count).toBe(5);
    expect(await usdBalancesOf(platform, 'general')).toEqual(['10.00']);
    expect(await transfersOf(platform)).toBe(0);
  });
});

describe('a booking whose balance read went stale', () => {
  it('is prepared again from a fresh read and books once, the intervening booking kept', async () => {
    const platform = await fundedPlatform();
    let transactions = 0;
    const via = serviceWith(
      (next, context) => async (args) => {
        if (context.commandName === 'TransactWriteItemsCommand' && ++transactions === 1) {
          // Another booking of the same account lands between the transfer's read and its write.
          await fund(platform.participantCode, 'USD', '2');
        }
        return next(args);
      },
      'bookingInBetween',
      'deserialize',
    );
    const response = await platform.post('/transfers', transfer(platform, '4'), { via });
    expect(response.status).toBe(201);
    expect(transactions).toBe(2);
    expect(await usdBalancesOf(platform, 'general', 'other')).toEqual(['8.00', '5.00']);
    expect(await transfersOf(platform)).toBe(1);
  });
});

describe('a read under throttling', () => {
  function batchReadsLeftUnprocessed(times: number) {
    const calls = { count: 0 };
    let left = times;
    const via = serviceWith(
      (next, context) => async (args) => {
        if (context.commandName !== 'BatchGetItemCommand') return next(args);
        calls.count++;
        if (left > 0) {
          left--;
          return nothingProcessed(args) as never;
        }
        return next(args);
      },
      'unprocessedKeys',
      'deserialize',
    );
    return { calls, via };
  }

  it('reads the reference prices (GET /index) again when DynamoDB leaves the keys unprocessed, and answers them', async () => {
    const platform = await newPlatform();
    const { calls, via } = batchReadsLeftUnprocessed(2);
    const response = await platform.get('/index', { via });
    expect(response.status).toBe(200);
    expect(calls.count).toBe(3);
    const direct = await platform.get('/index');
    expect(response.body.message.map((price: { symbol: string }) => price.symbol)).toEqual(
      direct.body.message.map((price: { symbol: string }) => price.symbol),
    );
  });

  it('answers GET /index 503 with Retry-After when the keys stay unprocessed', async () => {
    const platform = await newPlatform();
    const { calls, via } = batchReadsLeftUnprocessed(Infinity);
    const response = await platform.get('/index', { via });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBeTruthy();
    expect(calls.count).toBe(5);
  });

  it('retries a list’s throttled query and answers the page', async () => {
    const platform = await fundedPlatform();
    await platform.post('/transfers', transfer(platform, '1'));
    const { calls, via } = failing('QueryCommand', 2, throttlingException, 'initialize');
    const response = await platform.get('/transfers', { via });
    expect(response.status).toBe(200);
    expect(response.body.count).toBe(1);
    expect(response.body.message).toHaveLength(1);
    // The page and its count are two queries; the first two calls were throttled and tried again.
    expect(calls.count).toBe(4);
  });

  it('answers a list 503 with Retry-After when its queries stay throttled', async () => {
    const platform = await fundedPlatform();
    const { calls, via } = failing('QueryCommand', Infinity, throttlingException, 'initialize');
    const response = await platform.get('/transfers', { via });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBeTruthy();
    expect(response.body).toEqual({ errors: ['service busy, retry shortly'] });
    // Page and count are read in parallel, each given up after its 5 attempts (the answer may come while
    // the other is still pausing; its attempts stay bounded all the same).
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(calls.count).toBe(10);
  });
});
