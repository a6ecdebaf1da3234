import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { runAdmin } from '../../infra/ops/cli.js';
import { startHttpServer } from '../../infra/local/server.js';
import { UsageError } from '../../infra/ops/command.js';
import { type RateLimiter, SUSTAINED_WINDOW_SECONDS } from '../../lib/domain/rate-limits.js';
import { tableRateLimiter } from '../../lib/store/rate-limits.js';
import { sign } from '../../lib/http/signature.js';
import { auditLog } from '../../lib/store/audit.js';
import { getApiKey, readRateLimit } from '../../lib/store/api-keys.js';
import { platformEntity } from '../../lib/store/entities/platform.js';
import { idempotencyRecordEntity, rateWindowEntity, replayClaimEntity } from '../../lib/store/entities/window.js';
import { clientWith, ctx, testContext, type TestContext } from '../support/context.js';
import { fund, transferBody, usdBalancesOf } from '../support/ledger.js';
import {
  newPlatform,
  send,
  serviceFor,
  type Response,
  type TestPlatform,
  type TestService,
} from '../support/service.js';

/**
 * Rate limits (docs/api.md): each API key has a request rate limit, the default or its platform's as ops set it. Over
 * it a request is answered 429 with Retry-After and the IETF RateLimit-Policy and RateLimit fields, having
 * written nothing: no replay entry, no idempotency claim, no booking. Other platforms are unaffected.
 */
const admin = (...argv: string[]) => runAdmin(argv, { ctx });
const REPO = resolve(import.meta.dirname, '..', '..');

/** Moves `clock` to 50 ms into the next sustained window, so a test's requests fall in one window. */
function startOfWindow(clock: TestContext['clock']): void {
  const windowMs = SUSTAINED_WINDOW_SECONDS * 1000;
  const now = clock.nowMs();
  clock.advance(windowMs - (now % windowMs) + 50);
}

async function setLimit(platform: TestPlatform, rps: number, burst: number) {
  return admin(
    'platform',
    'limits',
    '--platform',
    platform.platformCode,
    '--rps',
    String(rps),
    '--burst',
    String(burst),
    '--reason',
    'rate limit test',
  );
}

/** A signed POST /transfers with a client id, its signature known (the replay cache's key). */
async function signedTransfer(platform: TestPlatform, amount: string, via?: TestService) {
  const body = transferBody(platform, { amount });
  const timestamp = (via ?? { ctx }).ctx.clock.nowSeconds();
  const signature = sign(
    Buffer.from(platform.credentials.api_secret, 'base64'),
    String(timestamp),
    'POST',
    '/transfers',
    JSON.stringify(body),
  );
  const requestId = randomUUID();
  const response = await send('POST', '/transfers', body, {
    credentials: platform.credentials,
    timestamp,
    headers: { 'X-Request-Id': requestId },
    via,
  });
  return { response, signature, requestId };
}

async function ttlItem(key: Record<string, string>) {
  return (await ctx.db.send(new GetCommand({ TableName: ctx.tables.ttl, Key: key }))).Item;
}

function expectRateLimited(response: Response, policy: string) {
  expect(response.status).toBe(429);
  expect(response.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
  expect(response.headers.get('ratelimit-policy')).toBe(policy);
  const remaining = response.headers.get('ratelimit');
  expect(remaining).toMatch(/^"(burst|sustained)";r=0;t=[1-9]\d*$/);
  expect(remaining!.endsWith(`t=${response.headers.get('retry-after')}`)).toBe(true);
  expect(response.body.errors[0]).toMatch(/^rate limit exceeded/);
}

describe('per-platform rate limits', () => {
  it('answers a flooding platform 429 with the headers, writing nothing, while another platform is served', async () => {
    const [flooder, quiet] = await Promise.all([newPlatform(), newPlatform()]);
    await Promise.all([fund(flooder.participantCode, 'USD', '100'), fund(quiet.participantCode, 'USD', '100')]);
    // Set after the key exists: the limit reaches the platform's existing keys.
    expect(await setLimit(flooder, 2, 3)).toMatchObject({ rate_limit: { rps: 2, burst: 3 }, api_keys_updated: 1 });
    startOfWindow(ctx.clock);

    const started = ctx.clock.nowMs();
    const [flood, served] = await Promise.all([
      Promise.all(Array.from({ length: 40 }, (_, i) => signedTransfer(flooder, `1.${String(i).padStart(2, '0')}`))),
      Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          i % 2 === 0
            ? quiet.get('/accounts?page_size=10')
            : quiet.post('/transfers', transferBody(quiet, { amount: `0.${String(i + 10)}` }), {
                headers: { 'X-Request-Id': randomUUID() },
              }),
        ),
      ),
    ]);
    const seconds = Math.floor(ctx.clock.nowMs() / 1000) - Math.floor(started / 1000) + 1;

    // The other platform: every request answered as if nobody else were there.
    expect(
      served.filter((response) => response.status !== 200 && response.status !== 201).map((response) => response.text),
    ).toEqual([]);

    const admitted = flood.filter(({ response }) => response.status === 201);
    const refused = flood.filter(({ response }) => response.status !== 201);
    expect(admitted.length).toBeGreaterThanOrEqual(1);
    // At most the burst in each second the flood spanned.
    expect(admitted.length).toBeLessThanOrEqual(3 * seconds);
    expect(refused.length).toBe(40 - admitted.length);
    for (const { response, signature, requestId } of refused) {
      expectRateLimited(
        response,
        `"burst";q=3;w=1, "sustained";q=${2 * SUSTAINED_WINDOW_SECONDS};w=${SUSTAINED_WINDOW_SECONDS}`,
      );
      // Nothing written: no replay entry for its signature, no idempotency claim for its id.
      expect(await ttlItem(replayClaimEntity.key({ api_key: flooder.credentials.api_key, signature }))).toBeUndefined();
      expect(
        await ttlItem(idempotencyRecordEntity.key({ platform_code: flooder.platformCode, request_id: requestId })),
      ).toBeUndefined();
    }
    for (const { signature, requestId } of admitted) {
      expect(await ttlItem(replayClaimEntity.key({ api_key: flooder.credentials.api_key, signature }))).toBeDefined();
      expect(
        await ttlItem(idempotencyRecordEntity.key({ platform_code: flooder.platformCode, request_id: requestId })),
      ).toBeDefined();
    }

    // Past the window the key is admitted again; exactly the admitted transfers were booked.
    ctx.clock.advance(SUSTAINED_WINDOW_SECONDS * 1000);
    const list = await flooder.get('/transfers?page_size=100');
    expect(list.status).toBe(200);
    expect(list.body.count).toBe(admitted.length);
    const [savings] = await usdBalancesOf(flooder, 'savings');
    const booked = admitted.reduce((sum, { response }) => sum + Number(response.body.message.amount), 0);
    expect(Number(savings)).toBeCloseTo(booked, 2);
  });

  it("turns a key it has refused away at the local server's door: the same 429, no handler run", async () => {
    // The server's `around` hook runs for each request a handler serves: the door answers before it.
    const served: string[] = [];
    const started = await startHttpServer(ctx, 0, '127.0.0.1', {
      around: async (request, handle) => {
        served.push(`${request.method} ${request.url}`);
        await handle();
      },
    });
    const door: TestService = { ctx, baseUrl: async () => started.baseUrl };
    try {
      const platform = await newPlatform({ on: door });
      await setLimit(platform, 1, 1);
      startOfWindow(ctx.clock);
      // The door's claim holds within the key's window: on a loaded machine real time could end it mid-test.
      ctx.clock.hold();
      const policy = `"burst";q=1;w=1, "sustained";q=${SUSTAINED_WINDOW_SECONDS};w=${SUSTAINED_WINDOW_SECONDS}`;

      expect((await platform.get('/accounts?page_size=10')).status).toBe(200);
      const byHandler = await platform.get('/accounts?page_size=10', {
        headers: { 'X-Request-Id': 'refused-by-handler' },
      });
      expectRateLimited(byHandler, policy);
      expect(served).toHaveLength(2);

      // Refused once, the key's requests no longer reach a handler until its window ends, and hear the same answer.
      const atDoor = await platform.post('/transfers', transferBody(platform, { amount: '1.00' }), {
        headers: { 'X-Request-Id': 'refused-at-door' },
      });
      expectRateLimited(atDoor, policy);
      expect(served).toHaveLength(2);
      expect(atDoor.body).toEqual(byHandler.body);
      expect(atDoor.headers.get('content-type')).toBe(byHandler.headers.get('content-type'));
      expect(atDoor.headers.get('x-request-id')).toBe('refused-at-door');
      expect(
        await ttlItem(
          idempotencyRecordEntity.key({ platform_code: platform.platformCode, request_id: 'refused-at-door' }),
        ),
      ).toBeUndefined();

      // What the signature middleware answers before it looks at a limit is still answered by it: an unsigned
      // route serves the key, a stale timestamp is a 403.
      expect((await platform.get('/time')).status).toBe(200);
      expect((await platform.get('/accounts', { timestamp: ctx.clock.nowSeconds() - 3_600 })).status).toBe(403);
      expect(served).toHaveLength(4);

      // Past the window the key is served again.
      ctx.clock.advance(SUSTAINED_WINDOW_SECONDS * 1000);
      expect((await platform.get('/accounts?page_size=10')).status).toBe(200);
      expect(served).toHaveLength(5);
    } finally {
      started.server.closeAllConnections();
      await new Promise((resolveClose) => started.server.close(resolveClose));
    }
  });

  it('refuses by the sustained window once the bursts add up, and names it', async () => {
    const platform = await newPlatform();
    await setLimit(platform, 1, 4);
    startOfWindow(ctx.clock);
    // Each four requests share one second of the service's time (the shared clock is reset after the file).
    ctx.clock.hold();
    const answers: Response[] = [];
    // Four a second, within the burst, until the window's 10 are used: the 11th is refused by the sustained quota.
    for (let i = 0; i < 11; i++) {
      if (i > 0 && i % 4 === 0) ctx.clock.advance(1000);
      answers.push(await platform.get('/accounts?page_size=10'));
    }
    expect(answers.slice(0, 10).map((response) => response.status)).toEqual(Array(10).fill(200));
    const last = answers[10]!;
    expectRateLimited(last, `"burst";q=4;w=1, "sustained";q=${SUSTAINED_WINDOW_SECONDS};w=${SUSTAINED_WINDOW_SECONDS}`);
    expect(last.headers.get('ratelimit')).toMatch(/^"sustained";r=0;t=\d+$/);
    // The window began 2 s (plus the test's time) ago: its end is 7 to 8 s away.
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThanOrEqual(7);
    expect(Number(last.headers.get('retry-after'))).toBeLessThanOrEqual(8);
    ctx.clock.reset();
  });

  it('counts in the TTL table with one conditional UpdateItem per request on AWS (RATE_LIMIT_COUNTER=table)', async () => {
    const calls: string[] = [];
    const counting = clientWith(
      (next, context) => async (args) => {
        calls.push(String(context.commandName));
        return next(args);
      },
      'countCalls',
      'initialize',
    );
    const tableCtx = testContext({ env: { RATE_LIMIT_COUNTER: 'table' }, db: counting });
    const memoryCtx = testContext({ env: { RATE_LIMIT_COUNTER: 'memory' }, db: counting });
    const [onTable, inMemory] = [serviceFor(tableCtx), serviceFor(memoryCtx)];
    const platform = await newPlatform();
    await setLimit(platform, 1, 2);
    startOfWindow(tableCtx.clock);
    memoryCtx.clock.advance(tableCtx.clock.nowMs() - memoryCtx.clock.nowMs());
    // The three requests must share one second of the service's time, however long the machine makes them take.
    tableCtx.clock.hold();
    memoryCtx.clock.hold();

    const callsOf = async (via: TestService) => {
      calls.length = 0;
      const response = await send('GET', '/accounts?page_size=10', undefined, {
        credentials: platform.credentials,
        via,
      });
      return { response, calls: [...calls] };
    };
    const first = await callsOf(onTable);
    const second = await callsOf(onTable);
    const third = await callsOf(onTable);
    expect([first.response.status, second.response.status, third.response.status]).toEqual([200, 200, 429]);
    // The limit came with the key item (no read of its own; a read within 5 s of the first uses the item that one
    // read, docs/api.md); the count is one UpdateItem, admitted or not.
    expect(first.calls.filter((name) => name === 'UpdateItemCommand')).toHaveLength(1);
    expect(third.calls).toEqual(['UpdateItemCommand']);
    expectRateLimited(
      third.response,
      `"burst";q=2;w=1, "sustained";q=${SUSTAINED_WINDOW_SECONDS};w=${SUSTAINED_WINDOW_SECONDS}`,
    );
    // Refused once, the key is refused from memory for the rest of its full window: no read, no count.
    const fourth = await callsOf(onTable);
    expect(fourth.calls).toEqual([]);
    expectRateLimited(
      fourth.response,
      `"burst";q=2;w=1, "sustained";q=${SUSTAINED_WINDOW_SECONDS};w=${SUSTAINED_WINDOW_SECONDS}`,
    );
    const windowStart = Math.floor(tableCtx.clock.nowSeconds() / SUSTAINED_WINDOW_SECONDS) * SUSTAINED_WINDOW_SECONDS;
    const counter = await ttlItem(
      rateWindowEntity.key({ api_key: platform.credentials.api_key, window_start: windowStart }),
    );
    expect(Number(counter?.total)).toBe(2);

    // In memory (npm start) the same request costs no DynamoDB call for its count.
    const local = await callsOf(inMemory);
    expect(local.response.status).toBe(200);
    expect(local.calls.length).toBe(first.calls.length - 1);
    expect(local.calls).not.toContain('UpdateItemCommand');
  });
});

describe('the deployed counter takes tokens in blocks (RATE_LIMIT_COUNTER=table)', () => {
  const LIMIT = { rps: 100, burst: 200 };
  const QUOTA = LIMIT.rps * SUSTAINED_WINDOW_SECONDS;
  // A time far from the suite's clock, at the start of a sustained window.
  const BASE_MS = 1_900_000_000_000;

  /** Three containers sharing the table, each with its own held tokens; every UpdateItem counted. */
  function containers() {
    const calls = { updates: 0 };
    const db = clientWith(
      (next, context) => async (args) => {
        if (context.commandName === 'UpdateItemCommand') calls.updates += 1;
        return next(args);
      },
      'countUpdates',
      'initialize',
    );
    const limiters = [0, 1, 2].map(() => tableRateLimiter({ db, tables: ctx.tables }));
    return { calls, limiters };
  }

  /** `perSecond` requests a second to each container, for `seconds`: what each aligned window admitted. */
  async function offer(limiters: RateLimiter[], apiKey: string, perSecond: number, seconds: number) {
    const admittedByWindow = new Map<number, number>();
    let requests = 0;
    for (let second = 0; second < seconds; second++) {
      for (let turn = 0; turn < perSecond; turn++) {
        for (const limiter of limiters) {
          const nowMs = BASE_MS + second * 1000 + Math.floor((turn * 1000) / perSecond);
          requests += 1;
          // As the signature middleware does: a key this container saw refused is refused from memory.
          if (limiter.knownFull(apiKey, nowMs)) continue;
          const admission = await limiter.admit(apiKey, LIMIT, nowMs);
          const window = Math.floor(second / SUSTAINED_WINDOW_SECONDS);
          if (admission.admitted) admittedByWindow.set(window, (admittedByWindow.get(window) ?? 0) + 1);
        }
      }
    }
    return { admittedByWindow, requests };
  }

  it('never admits more than a window allows across containers, and refuses little that fits, at well under 0.2 writes a request', async () => {
    // 180 requests a second against a limit of 100: each window's quota is met, never passed.
    const { calls, limiters } = containers();
    const flooded = await offer(limiters, `key-${randomUUID()}`, 60, 30);
    for (const admitted of flooded.admittedByWindow.values()) {
      expect(admitted).toBeLessThanOrEqual(QUOTA);
      expect(admitted).toBeGreaterThanOrEqual(QUOTA * 0.9);
    }
    expect(calls.updates / flooded.requests).toBeLessThan(0.2);

    // 81 a second, within the limit: every request admitted, the tokens a container held unused given back.
    calls.updates = 0;
    const within = await offer(limiters, `key-${randomUUID()}`, 27, 20);
    expect([...within.admittedByWindow.values()]).toEqual([27 * 3 * 10, 27 * 3 * 10]);
    expect(calls.updates / within.requests).toBeLessThan(0.2);
  });

  it('admits every request of a burst within the limit in a process serving them at once, taking a block at a time', async () => {
    const { calls, limiters } = containers();
    const [process] = limiters;
    const apiKey = `key-${randomUUID()}`;
    // A busy second (60 requests, one at a time) sizes the next blocks at the largest, burst / 8 = 25 tokens.
    for (let turn = 0; turn < 60; turn++) {
      expect(await process!.admit(apiKey, LIMIT, BASE_MS + turn * 10)).toEqual({ admitted: true });
    }
    // Then 64 at once in the next second, well within its burst of 200. Each taking a block of its own would
    // take 1,600 tokens: the second's count would refuse most of them.
    calls.updates = 0;
    const admissions = await Promise.all(
      Array.from({ length: 64 }, () => process!.admit(apiKey, LIMIT, BASE_MS + 1_000)),
    );
    expect(admissions.filter((admission) => admission.admitted)).toHaveLength(64);
    // 64 requests in blocks of 25 (the first one returning the last second's unused tokens): a handful of writes.
    expect(calls.updates).toBeLessThanOrEqual(4);
  });

  it('fails only the request whose take failed: those waiting on it take their own', async () => {
    let failNext = true;
    const db = clientWith(
      (next, context) => async (args) => {
        if (context.commandName === 'UpdateItemCommand' && failNext) {
          failNext = false;
          throw Object.assign(new Error('the counter could not be reached'), { name: 'InternalServerError' });
        }
        return next(args);
      },
      'failFirstTake',
      'initialize',
    );
    const process = tableRateLimiter({ db, tables: ctx.tables });
    const apiKey = `key-${randomUUID()}`;
    const admissions = await Promise.allSettled(Array.from({ length: 8 }, () => process.admit(apiKey, LIMIT, BASE_MS)));
    expect(admissions.filter((outcome) => outcome.status === 'rejected')).toHaveLength(1);
    expect(admissions.filter((outcome) => outcome.status === 'fulfilled' && outcome.value.admitted)).toHaveLength(7);
  });
});

describe('platform limits (ops CLI)', () => {
  it('sets a platform limit on its keys, audited; a key made later starts with it', async () => {
    const platform = await newPlatform();
    const since = ctx.clock.nowMs();
    expect(await setLimit(platform, 50, 100)).toEqual({
      platform_code: platform.platformCode,
      rate_limit: { rps: 50, burst: 100 },
      api_keys_updated: 1,
    });
    expect((await getApiKey(ctx, platform.credentials.api_key))?.rate_limit).toEqual({ rps: 50, burst: 100 });
    const later = (await admin(
      'key',
      'create',
      '--platform',
      platform.platformCode,
      '--permissions',
      'accounts',
      '--reason',
      'second key',
    )) as { api_key: string };
    expect((await getApiKey(ctx, later.api_key))?.rate_limit).toEqual({ rps: 50, burst: 100 });
    const [entry] = (await auditLog(ctx, since)).filter(
      (e) => e.command === 'platform limits' && e.changes.platform_code === platform.platformCode,
    );
    expect(entry?.reason).toBe('rate limit test');
    expect(readRateLimit(entry?.changes.rate_limit)).toEqual({ rps: 50, burst: 100 });
  });

  it('refuses a non-positive or non-integer rate as a usage error, writing nothing', async () => {
    const platform = await newPlatform();
    const since = ctx.clock.nowMs();
    const refused = async (rps: string, burst: string, problem: RegExp) => {
      const failure = await admin(
        'platform',
        'limits',
        '--platform',
        platform.platformCode,
        `--rps=${rps}`,
        `--burst=${burst}`,
        '--reason',
        'bad',
      ).catch((error: unknown) => error);
      expect(failure, `${rps} ${burst}`).toBeInstanceOf(UsageError);
      expect((failure as Error).message).toMatch(problem);
    };
    await refused('0', '5', /--rps must be a positive whole number/);
    await refused('-3', '5', /--rps must be a positive whole number/);
    await refused('1.5', '5', /--rps must be a positive whole number/);
    await refused('1e3', '5000', /--rps must be a positive whole number/);
    await refused('ten', '5', /--rps must be a positive whole number/);
    await refused('5', '0', /--burst must be a positive whole number/);
    await refused('5', '2.5', /--burst must be a positive whole number/);
    await refused('10', '5', /--burst must be at least rps/);
    await refused('5000', '5000', /--rps must be an integer from 1 to 1000/);
    const unknown = await admin(
      'platform',
      'limits',
      '--platform',
      'NOSUCHPLATFORM',
      '--rps',
      '5',
      '--burst',
      '10',
      '--reason',
      'bad',
    ).catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(UsageError);

    const item = (
      await ctx.db.send(
        new GetCommand({
          TableName: ctx.tables.main,
          Key: platformEntity.key({ platform_code: platform.platformCode }),
        }),
      )
    ).Item;
    expect(item?.rate_limit).toBeUndefined();
    expect((await getApiKey(ctx, platform.credentials.api_key))?.rate_limit).toBeUndefined();
    const entries = (await auditLog(ctx, since)).filter(
      (e) =>
        e.command === 'platform limits' &&
        (e.changes.platform_code === platform.platformCode || e.changes.platform_code === 'NOSUCHPLATFORM'),
    );
    expect(entries).toEqual([]);
  });

  it('exits 2 on a bad rate before connecting to anything (the real entry point)', () => {
    const run = spawnSync(
      'node_modules/.bin/tsx',
      ['infra/local/admin.ts', 'platform', 'limits', '--platform', 'X', '--rps', '0', '--burst', '5', '--reason', 'r'],
      {
        cwd: REPO,
        encoding: 'utf8',
        timeout: 60_000,
        env: {
          ...process.env,
          TABLE_NAME: '',
          TTL_TABLE_NAME: '',
          DATA_DIR: resolve(REPO, '.data-rate-limits-test-none'),
        },
      },
    );
    expect(run.status, run.stderr).toBe(2);
    expect(run.stderr).toContain('--rps must be a positive whole number');
  });
});
