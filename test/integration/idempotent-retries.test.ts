import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { sign } from '../../lib/http/signature.js';
import { runAdmin } from '../../infra/ops/cli.js';
import { routes } from '../../infra/routes.js';
import { customerBody } from '../support/customers.js';
import { ctx } from '../support/context.js';
import { serviceCrashingAfterCommit, serviceWith } from '../support/faults.js';
import { fund } from '../support/ledger.js';
import { setPrice } from '../support/pricing.js';
import { lostAnswer } from '../support/raw-response.js';
import { newPlatform, send, type TestPlatform } from '../support/service.js';
import { newCustomer } from '../support/trade-parties.js';
import { tradeBody } from '../support/trades.js';

/**
 * Replays (docs/api.md, "Idempotency and replays"): a client that times out resends the very same bytes, often inside the same
 * second. With the first request's X-Request-Id it gets the first answer byte for byte; without it (or with
 * another id) a 409 `request already received`; never a second booking, never a 403. And a run that
 * committed its booking but died before answering leaves the retry that booking's answer. For every POST.
 *
 * Pairs priced here: DOGE/USD and USDC/EUR. Files share the database, so a pair another file prices too gets
 * the same price here (reference-responses.test.ts asserts amounts at DOGE/USD 0.25, USDC/EUR 0.9).
 */
const ETH_ADDRESS = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';

let platform: TestPlatform;
let customer: string;
let buyer: string;
let seller: string;
let endpointId: string;
let eventId: string;

beforeAll(async () => {
  await Promise.all([setPrice('DOGE', 'USD', '0.25'), setPrice('USDC', 'EUR', '0.9')]);
  await runAdmin(['fee', 'set', '--asset', 'USDC', '--quantity', '1.5', '--reason', 'test'], { ctx });
  platform = await newPlatform();
  [customer, buyer, seller] = await Promise.all([
    newCustomer(platform.platformCode),
    newCustomer(platform.platformCode),
    newCustomer(platform.platformCode),
  ]);
  await Promise.all([
    fund(platform.participantCode, 'USD', '100000'),
    fund(platform.participantCode, 'EUR', '100000'),
    fund(platform.participantCode, 'DOGE', '1000', 'awards'),
  ]);
  // A webhook endpoint and an event of the platform's, for the routes that act on one.
  const endpoint = await platform.post('/webhooks/endpoints', { url: 'http://127.0.0.1:9/retries' });
  expect(endpoint.status, endpoint.text).toBe(200);
  endpointId = endpoint.body.message.id;
  const events = await platform.get('/events?page_size=1');
  expect(events.status, events.text).toBe(200);
  eventId = events.body.message[0].id;
});

/** A fresh, valid request of each POST route (quotes are made first where the route executes one). */
const requests: Record<string, () => Promise<unknown>> = {
  '/participants/customers/new': async () => customerBody(),
  '/participants/customers/minor': async () => ({
    ...customerBody(),
    first_name: 'Byron',
    date_of_birth: new Date(ctx.clock.nowMs() - 10 * 365 * 86_400_000).toISOString().slice(0, 10),
    utma_signed_timestamp: ctx.clock.nowMs() - 60_000,
    custodian_participant_code: customer,
    custodian_relationship: 'parent',
  }),
  '/transfers': async () => ({
    from_participant_code: platform.participantCode,
    to_participant_code: platform.participantCode,
    to_account_label: 'retries',
    asset: 'USD',
    amount: '1.25',
  }),
  '/trades': async () => tradeBody(platform, { buyer, seller }),
  '/liquidity/execute': async () => {
    const quote = await platform.get('/liquidity/rfq?side=buy&underlying=DOGE&quoted_currency=USD&quantity=10');
    expect(quote.status, quote.text).toBe(200);
    return { quote_id: quote.body.message.quote_id };
  },
  '/liquidity/rfq': async () => ({ side: 'buy', underlying: 'DOGE', quoted_currency: 'USD', quantity: '10' }),
  '/rewards': async () => ({ underlying: 'DOGE', quoted_currency: 'USD', quantity: '3', participant_code: customer }),
  '/awards/fund': async () => ({ asset: 'DOGE', quoted_currency: 'USD', quantity: '2' }),
  '/awards/distribute': async () => ({ asset: 'DOGE', quantity: '0.5', participant_codes: [customer, buyer] }),
  '/convert_withdraw/execute': async () => {
    const quote = await platform.get(
      `/convert_withdraw/rfq?side=buy&underlying=USDC&quoted_currency=EUR&quantity=10&withdrawal_address=${ETH_ADDRESS}`,
    );
    expect(quote.status, quote.text).toBe(200);
    return { quote_id: quote.body.message.quote_id };
  },
  '/webhooks/endpoints': async () => ({ url: 'http://127.0.0.1:9/retries' }),
  '/webhooks/endpoints/{id}/rotate_secret': async () => ({}),
  '/webhooks/endpoints/{id}/test': async () => ({}),
  '/events/{id}/redeliver': async () => ({}),
};

/** Where a request of the route goes: routes with a path parameter act on the platform's endpoint or event. */
const concrete = (route: string) =>
  route
    .replace('/webhooks/endpoints/{id}', `/webhooks/endpoints/${endpointId}`)
    .replace('/events/{id}', `/events/${eventId}`);

const posts = routes.filter((route) => route.method === 'POST');

/**
 * A request of the route, made unique by a field the service ignores (unknown fields are dropped): two
 * tests sending equal bodies in the same second would otherwise share a signature, which is the point here.
 */
const freshRequest = async (path: string) => ({ ...((await requests[path]!()) as object), client_nonce: randomUUID() });

it('covers every POST route', () => {
  expect(Object.keys(requests).sort()).toEqual(posts.map((route) => route.path).sort());
});

/** Exactly the same bytes, headers included: what an HTTP client's retry middleware sends. */
function sameBytes(path: string, body: unknown, requestId?: string) {
  const text = JSON.stringify(body);
  const timestamp = String(ctx.clock.nowSeconds());
  const headers: Record<string, string> = {
    'X-SVC-API-KEY': platform.credentials.api_key,
    'X-SVC-PASSPHRASE': platform.credentials.passphrase,
    'X-SVC-TIMESTAMP': timestamp,
    'X-SVC-SIGNED': sign(Buffer.from(platform.credentials.api_secret, 'base64'), timestamp, 'POST', path, text),
    ...(requestId && { 'X-Request-Id': requestId }),
  };
  return (overrides: Record<string, string | undefined> = {}) => {
    const sent = Object.fromEntries(
      Object.entries({ ...headers, ...overrides }).filter((entry): entry is [string, string] => entry[1] !== undefined),
    );
    return send('POST', path, undefined, { rawBody: text, unsigned: true, headers: sent });
  };
}

/** The platform's balances, read without the test client's one-second stepping (a GET is never a replay). */
const ledger = async () => {
  const response = await send('GET', '/accounts', undefined, { credentials: platform.credentials });
  expect(response.status, response.text).toBe(200);
  return JSON.stringify(
    response.body.message.map((account: any) => [
      account.account_owner,
      account.account_label,
      account.asset,
      account.balance,
    ]),
  );
};

/** Which of the route's transactions is the last of its booking (a distribution: record, one chunk, completion). */
const LAST_TRANSACTION: Record<string, number> = { '/awards/distribute': 2 };

describe.each(posts.map((route) => [route.path] as const))('POST %s', (path) => {
  it('a same-second byte-identical retry with X-Request-Id gets the first answer byte for byte, and books nothing again', async () => {
    const requestId = randomUUID();
    const attempt = sameBytes(concrete(path), await freshRequest(path), requestId);
    const first = await attempt();
    expect(first.status, first.text).toBeLessThan(300);
    const booked = await ledger();
    for (const retry of await Promise.all([attempt(), attempt()])) {
      expect(retry.status).toBe(first.status);
      expect(retry.text).toBe(first.text);
      expect(retry.headers.get('x-request-id')).toBe(requestId);
    }
    expect(await ledger()).toBe(booked);
  });

  it('the same bytes without X-Request-Id, or with another id, are 409 request already received; nothing is booked again', async () => {
    const attempt = sameBytes(concrete(path), await freshRequest(path));
    const first = await attempt();
    expect(first.status, first.text).toBeLessThan(300);
    const booked = await ledger();
    for (const retry of [await attempt(), await attempt({ 'X-Request-Id': randomUUID() })]) {
      expect(retry.status, retry.text).toBe(409);
      expect(retry.body.errors).toEqual([expect.stringMatching(/^request already received: /)]);
    }
    expect(await ledger()).toBe(booked);
    // The first request's id on bytes first sent without one is another id too.
    const withId = sameBytes(concrete(path), await freshRequest(path), randomUUID());
    expect((await withId()).status).toBeLessThan(300);
    expect((await withId({ 'X-Request-Id': undefined })).status).toBe(409);
  });

  describe('a run that committed its booking and died before answering', () => {
    it('leaves the retry (a new signature, the same X-Request-Id) the booking it made', async () => {
      const requestId = randomUUID();
      const body = await freshRequest(path);
      const before = await ledger();
      const via = serviceCrashingAfterCommit({ skip: LAST_TRANSACTION[path] ?? 0 });
      const crashed = await platform.post(concrete(path), body, { headers: { 'X-Request-Id': requestId }, via });
      expect(crashed.status, crashed.text).toBe(500);
      const afterCrash = await ledger();

      const retry = await platform.post(concrete(path), body, { headers: { 'X-Request-Id': requestId } });
      expect(retry.status, retry.text).toBeLessThan(300);
      expect(await ledger()).toBe(afterCrash);
      // Something was booked by the crashed run (the ledger moved, or a record exists the answer names).
      if (afterCrash === before) expect(retry.body.message).toBeTruthy();
      const again = await platform.post(concrete(path), body, { headers: { 'X-Request-Id': requestId } });
      expect(again.text).toBe(retry.text);
    });
  });
});

describe('a claim whose answer was lost', () => {
  /** Loses the answer of the first PutItem whose key starts with `prefix`: it is written, then the SDK sends the very same put again. */
  function losingFirstPut(prefix: string) {
    const lost = { count: 0 };
    const via = serviceWith(
      (next, context) => async (args) => {
        const result = await next(args);
        // The low-level input at this step: attribute values marshalled ({ S: '...' }).
        const key = String(
          (args as unknown as { input?: { Item?: { pk?: { S?: string } } } }).input?.Item?.pk?.S ?? '',
        );
        if (context.commandName === 'PutItemCommand' && key.startsWith(prefix) && lost.count === 0) {
          lost.count += 1;
          throw lostAnswer(result);
        }
        return result;
      },
      'losePutAnswer',
    );
    return { via, lost };
  }

  // A route whose claims are sent before its use case (POST /transfers carries its own in its booking's transaction,
  // where a resent transaction is answered by its token: transfer-calls.test.ts).
  it('the idempotency record: the resent put finds its own record, and the request goes on as the first', async () => {
    const platform = await newPlatform();
    const { via, lost } = losingFirstPut('IDEMPOTENCY#');
    const requestId = randomUUID();
    const body = customerBody();
    const response = await platform.post('/participants/customers/new', body, {
      headers: { 'X-Request-Id': requestId },
      via,
    });
    expect(lost.count).toBe(1);
    expect(response.status, response.text).toBe(201);
    const again = await platform.post('/participants/customers/new', body, { headers: { 'X-Request-Id': requestId } });
    expect(again.text).toBe(response.text);
  });

  it('the signature replay claim of a request without X-Request-Id: the resent put finds its own claim, not a replay', async () => {
    const platform = await newPlatform();
    const { via, lost } = losingFirstPut('REPLAY#');
    const response = await platform.post('/participants/customers/new', customerBody(), { via });
    expect(lost.count).toBe(1);
    expect(response.status, response.text).toBe(201);
  });
});

describe('a failed request whose X-Request-Id cannot be released', () => {
  it('answers its own error (not a 500) when DynamoDB throttles the release past the SDK retries', async () => {
    const platform = await newPlatform();
    let refused = 0;
    const via = serviceWith(
      (next, context) => async (args) => {
        if (context.commandName === 'DeleteItemCommand') {
          refused += 1;
          throw Object.assign(new Error('throughput exceeded'), {
            name: 'ProvisionedThroughputExceededException',
            $metadata: {},
          });
        }
        return next(args);
      },
      'throttleRelease',
      'initialize',
    );
    const requestId = randomUUID();
    // No such quote: the execution is refused after its request claimed its id. (A transfer refused by its
    // transaction claims no id: its claim rides in that transaction, transfer-calls.test.ts.)
    const body = { quote_id: randomUUID() };
    const response = await platform.post('/liquidity/execute', body, { headers: { 'X-Request-Id': requestId }, via });
    expect(refused).toBeGreaterThan(0);
    expect(response.status, response.text).toBe(404);
    // The id stays held until its in-progress lease lapses: a retry meanwhile hears so.
    const retry = await platform.post('/liquidity/execute', body, { headers: { 'X-Request-Id': requestId } });
    expect(retry.status, retry.text).toBe(409);
  });
});
