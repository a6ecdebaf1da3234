import { randomUUID } from 'node:crypto';
import { createServer, request as httpRequest, type Server, type ServerResponse } from 'node:http';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Context } from 'aws-lambda';
import { startHttpServer } from '../../infra/local/server.js';
import type { AppContext } from '../../lib/context.js';
import { onLambda } from '../../lib/edge.js';
import { DEADLINE_RESERVE_MS } from '../../lib/runtime/deadline.js';
import { BookingQueuedError } from '../../lib/domain/errors.js';
import { accountKey } from '../../lib/domain/ledger.js';
import { bookingLeaseEntity } from '../../lib/store/entities/booking-queue.js';
import { ctx, testContext, testEndpoint } from '../support/context.js';
import { balances, fund, generalOf, hotWithStalledCommitter } from '../support/ledger.js';
import { newPlatform, type TestPlatform, type TestService } from '../support/service.js';
import { TEST_SECRETS_KEY, TEST_TABLES } from '../support/tables.js';

/**
 * Every wait inside an invocation is bounded by its remaining time (lib/runtime/deadline.ts): a request that runs
 * out answers 503 with Retry-After while there is time to, and frees its X-Request-Id for the retry. These
 * requests run through the local server with a short function timeout, so the Lambda context's remaining time is
 * small, and the SDK's own timeouts (the test context's: 30 s a request, 6 attempts) are far longer than it.
 */

/** Short enough that only the deadline can end a stalled call; long enough for a loaded machine's first calls. */
const SHORT_FUNCTION_TIMEOUT_MS = 6000;

/** A local server bound to `serviceCtx` whose invocations get `timeoutMs` each, stopped when the file is done. */
function shortLivedService(serviceCtx: AppContext, timeoutMs: number): TestService {
  let started: ReturnType<typeof startHttpServer> | undefined;
  return {
    ctx: serviceCtx,
    async baseUrl() {
      started ??= startHttpServer(serviceCtx, 0, '127.0.0.1', { functionTimeoutMs: timeoutMs });
      return (await started).baseUrl;
    },
  };
}

const payout = (platform: TestPlatform, label: string) => ({
  from_participant_code: platform.participantCode,
  from_account_group: platform.platformCode,
  from_account_label: 'general',
  to_participant_code: platform.participantCode,
  to_account_group: platform.platformCode,
  to_account_label: label,
  asset: 'USD',
  amount: '1',
});

/**
 * A proxy in front of DynamoDB Local that passes every call on except the ones `stalls` picks, which it accepts
 * and never answers: a dependency stalled mid-request. It records when a stalled call's connection is dropped by
 * the client (the attempt abandoned, rather than left hanging for the SDK's request timeout).
 */
class StallingProxy {
  readonly server: Server;
  readonly stalled: { target: string; closed: boolean }[] = [];
  readonly #open = new Set<ServerResponse>();

  constructor(upstream: URL, stalls: (target: string) => boolean) {
    this.server = createServer((req, res) => {
      const target = String(req.headers['x-amz-target'] ?? '');
      if (stalls(target)) {
        const entry = { target, closed: false };
        this.stalled.push(entry);
        this.#open.add(res);
        res.on('close', () => {
          entry.closed = true;
          this.#open.delete(res);
        });
        req.resume();
        return;
      }
      const forward = httpRequest(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on('error', () => res.destroy());
      req.pipe(forward);
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as { port: number };
    return `http://127.0.0.1:${port}`;
  }

  async close(): Promise<void> {
    for (const res of this.#open) res.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

describe('a booking whose transaction stalls, with little time left', () => {
  let proxy: StallingProxy;
  let via: TestService;

  beforeAll(async () => {
    proxy = new StallingProxy(new URL(testEndpoint()), (target) => target.endsWith('.TransactWriteItems'));
    const endpoint = await proxy.listen();
    via = shortLivedService(testContext({ env: { DYNAMODB_ENDPOINT: endpoint } }), SHORT_FUNCTION_TIMEOUT_MS);
  });

  afterAll(async () => {
    await proxy.close();
  });

  it('answers 503 with Retry-After before the invocation ends, abandons the stalled call, and frees its X-Request-Id', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '10');
    const requestId = randomUUID();
    const first = await platform.post('/transfers', payout(platform, 'payee'), {
      headers: { 'X-Request-Id': requestId },
      via,
    });
    expect(first.status, first.text).toBe(503);
    expect(first.headers.get('retry-after')).toBe('1');
    expect(first.body).toEqual({ errors: ['the request ran out of time; retry shortly'] });
    // The stalled transaction was reached and its attempt aborted at the deadline: the SDK's request timeout
    // (30 s) would have kept it open long after this answer, and the handler's backstop does not abort it.
    expect(proxy.stalled.map((call) => call.target)).toEqual(['DynamoDB_20120810.TransactWriteItems']);
    await vi.waitFor(() => expect(proxy.stalled[0]!.closed).toBe(true));

    // The id is free: the retry is processed (not 409 for the minute of the in-progress lease) and books once.
    const retry = await platform.post('/transfers', payout(platform, 'payee'), {
      headers: { 'X-Request-Id': requestId },
    });
    expect(retry.status, retry.text).toBe(201);
    const after = await balances(platform);
    expect([after[`${platform.participantCode}/general/USD`], after[`${platform.participantCode}/payee/USD`]]).toEqual([
      '9.00',
      '1.00',
    ]);
    expect((await platform.get('/transfers')).body.count).toBe(1);
  });
});

describe('a hot account whose committer stalls, with little time left', () => {
  // The wait's own bound (HOT_ACCOUNT_WAIT_MS) is the test context's 30 s: only the deadline can end it sooner.
  const via = shortLivedService(testContext(), SHORT_FUNCTION_TIMEOUT_MS);

  it('ends the wait at the deadline: 503 with the booking still queued, and the retry gets its outcome once', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '10');
    const general = generalOf(platform);
    await hotWithStalledCommitter(general);
    const requestId = randomUUID();
    const first = await platform.post('/transfers', payout(platform, 'payee'), {
      headers: { 'X-Request-Id': requestId },
      via,
    });
    // The wait ended itself (its answer says the booking is queued); abandoned by the handler's backstop it would
    // say the request ran out of time, and unbounded it would outlive the invocation.
    expect(first.status, first.text).toBe(503);
    expect(first.headers.get('retry-after')).toBe('1');
    expect(first.body.errors).toEqual([new BookingQueuedError().message]);

    // The committer's lease lapses; the retry (same id, a full-length invocation) commits the queue itself.
    await ctx.db.send(
      new UpdateCommand({
        TableName: ctx.tables.main,
        Key: bookingLeaseEntity.key({ account_key: accountKey(general) }),
        UpdateExpression: 'SET until_ms = :past',
        ExpressionAttributeValues: { ':past': 0 },
      }),
    );
    const retry = await platform.post('/transfers', payout(platform, 'payee'), {
      headers: { 'X-Request-Id': requestId },
    });
    expect(retry.status, retry.text).toBe(201);
    const after = await balances(platform);
    expect([after[`${platform.participantCode}/general/USD`], after[`${platform.participantCode}/payee/USD`]]).toEqual([
      '9.00',
      '1.00',
    ]);
  });
});

describe('a function that is not an API route, on Lambda', () => {
  it('runs within its invocation deadline too: what it waits on stops the reserve before its timeout', async () => {
    // The configuration a deployed function reads (setup-env puts the environment back after the file).
    Object.assign(process.env, {
      DYNAMODB_ENDPOINT: testEndpoint(),
      TABLE_NAME: TEST_TABLES.main,
      TTL_TABLE_NAME: TEST_TABLES.ttl,
      SECRETS_LOCAL_KEY: TEST_SECRETS_KEY,
      LOG_LEVEL: 'silent',
    });
    // A settlement task or queue consumer: what its waits would read, reported instead.
    const handler = onLambda((functionCtx) => async () => functionCtx.deadlines.remainingMs());
    const context = { functionName: 'task', awsRequestId: randomUUID(), getRemainingTimeInMillis: () => 60_000 };
    const remainingMs = await handler({}, context as unknown as Context);
    expect(remainingMs).toBeLessThanOrEqual(60_000 - DEADLINE_RESERVE_MS);
    expect(remainingMs).toBeGreaterThan(0);
  });
});
