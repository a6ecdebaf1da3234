import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { clientWith, testContext } from '../support/context.js';
import { fund } from '../support/ledger.js';
import { newPlatform, serviceFor, type TestPlatform, type TestService } from '../support/service.js';

/**
 * DynamoDB throttling, injected with SDK middleware (DynamoDB Local never throttles). A fault at the
 * `deserialize` step sits inside the SDK's own retry loop and sees each of its attempts; at `initialize` it
 * sees each call of the store once, so only the store's retry policy (`lib/store/retry.ts`, 5 attempts)
 * retries it.
 */
type Middleware = Parameters<typeof clientWith>[0];

/** The SDK's own attempts per call, as the service's clients have them by default (AWS_MAX_ATTEMPTS). */
const SDK_ATTEMPTS = 3;

function serviceWith(middleware: Middleware, name: string, step: 'initialize' | 'deserialize'): TestService {
  return serviceFor(testContext({ db: clientWith(middleware, name, step, { maxAttempts: SDK_ATTEMPTS }) }));
}

const throttlingException = () =>
  Object.assign(new Error('The level of configured provisioned throughput for the table was exceeded.'), {
    name: 'ProvisionedThroughputExceededException',
    $metadata: { httpStatusCode: 400 },
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

const transfer = (platform: TestPlatform, amount: string) => ({
  from_participant_code: platform.participantCode,
  to_participant_code: platform.participantCode,
  to_account_label: 'other',
  asset: 'USD',
  amount,
});

async function fundedPlatform(): Promise<TestPlatform> {
  const platform = await newPlatform();
  await fund(platform.participantCode, 'USD', '10');
  // The receiving account exists already, so the transfer is one transaction (no account-opening swap).
  await fund(platform.participantCode, 'USD', '1', 'other');
  return platform;
}

describe('a read under throttling', () => {
  /**
   * What DynamoDB answers a throttled batch read: success, every key it was asked for left unprocessed. Built
   * as the HTTP answer (this step sits below the SDK's deserializer), from the request as sent.
   */
  const unprocessed = (request: { body: string | Uint8Array }) => {
    const sent = JSON.parse(typeof request.body === 'string' ? request.body : new TextDecoder().decode(request.body)) as { RequestItems: Record<string, unknown> };
    const [table] = Object.keys(sent.RequestItems);
    const body = JSON.stringify({ Responses: { [table!]: [] }, UnprocessedKeys: sent.RequestItems });
    return {
      response: {
        statusCode: 200,
        reason: 'OK',
        headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': crypto.randomUUID() },
        body: Readable.from([Buffer.from(body)]),
      },
    };
  };

  function batchReadsLeftUnprocessed(times: number) {
    const calls = { count: 0 };
    let left = times;
    const via = serviceWith(
      (next, context) => async (args) => {
        if (context.commandName !== 'BatchGetItemCommand') return next(args);
        calls.count++;
        if (left > 0) {
          left--;
          return unprocessed((args as unknown as { request: { body: string | Uint8Array } }).request) as never;
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
    expect(response.body.message.map((price: { symbol: string }) => price.symbol)).toEqual(direct.body.message.map((price: { symbol: string }) => price.symbol));
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
