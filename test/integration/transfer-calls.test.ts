import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { runAdmin } from '../../infra/ops/cli.js';
import { AuthenticationError } from '../../lib/domain/errors.js';
import { accountIdOf, type AccountRef } from '../../lib/domain/ledger.js';
import { Money } from '../../lib/domain/money.js';
import { revokeApiKey } from '../../lib/store/api-keys.js';
import { accountEntity } from '../../lib/store/entities/ledger.js';
import { priceEntity } from '../../lib/store/entities/price.js';
import { clientWith, ctx, testContext } from '../support/context.js';
import { listEvents } from '../support/events.js';
import { fund, markHot, transferBody } from '../support/ledger.js';
import { customersViaHttp } from '../support/customers.js';
import { setPrice } from '../support/pricing.js';
import {
  countingInstance,
  type CountingInstance,
  newPlatform,
  type Response,
  send,
  serviceFor,
  type TestPlatform,
} from '../support/service.js';

/**
 * POST /transfers in one DynamoDB call on a warm function (docs/performance.md, "DynamoDB calls per request"):
 * the key's check, the signature's replay claim and the X-Request-Id's record ride in the booking's transaction,
 * the participants' platforms and the accounts' states are kept by the context. Each "instance" is a context of
 * its own with a client counting every call it sends, and a server bound to it; all share DynamoDB Local. The
 * instances' clocks are held while a test runs, so the key item kept for 5 s is the one a request is verified
 * against, however slow the machine; each request moves both on by a millisecond, as a transfer's id is its
 * millisecond and three random digits (two transfers in one held millisecond would collide one time in 500,
 * and the id drawn again costs a second transaction).
 */

const a = countingInstance();
const b = countingInstance();

/** Holds both instances' clocks while `work` runs. */
async function held<T>(work: () => Promise<T>): Promise<T> {
  a.ctx.clock.hold();
  b.ctx.clock.hold();
  try {
    return await work();
  } finally {
    a.ctx.clock.reset();
    b.ctx.clock.reset();
  }
}

const account = (platform: TestPlatform, label: string): AccountRef => ({
  participant_code: platform.participantCode,
  account_group: platform.platformCode,
  account_label: label,
  asset: 'USD',
});

/** The account's balance and version as stored. */
async function stored(ref: AccountRef): Promise<{ balance: string; version: number }> {
  const out = await ctx.db.send(new GetCommand({ ...accountEntity.get(ctx.tables, ref), ConsistentRead: true }));
  const item = accountEntity.parse(out.Item!);
  return { balance: new Money(item.balance).toFixed(), version: item.version ?? 0 };
}

/** A client of one platform that sends through any instance, never signing the same bytes twice by accident. */
function clientOf(platform: TestPlatform) {
  const usedSignatures = new Set<string>();
  return (
    via: CountingInstance,
    body: unknown,
    options: { headers?: Record<string, string>; timestamp?: number } = {},
  ): Promise<Response> => {
    a.ctx.clock.advance(1);
    b.ctx.clock.advance(1);
    return send('POST', '/transfers', body, {
      credentials: platform.credentials,
      via: via.service,
      usedSignatures: options.timestamp === undefined ? usedSignatures : undefined,
      ...options,
    });
  };
}

const ALREADY_RECEIVED =
  'request already received: a request with this signature was accepted already; send the same X-Request-Id to get its answer, or sign a new request with a new timestamp';

describe('POST /transfers on a warm function', () => {
  it('is one call, the transaction: without X-Request-Id and with it (whose retry gets the stored answer)', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '100');
    const post = clientOf(platform);
    await held(async () => {
      expect((await post(a, transferBody(platform))).status).toBe(201);
      const warm = await a.counted(() => post(a, transferBody(platform, { amount: '2.00' })));
      expect(warm.result.status, warm.result.text).toBe(201);
      expect(warm.calls).toEqual(['TransactWriteItemsCommand']);

      const requestId = randomUUID();
      const idempotent = await a.counted(() =>
        post(a, transferBody(platform, { amount: '3.00' }), { headers: { 'X-Request-Id': requestId } }),
      );
      expect(idempotent.result.status, idempotent.result.text).toBe(201);
      expect(idempotent.calls).toEqual(['TransactWriteItemsCommand']);
      // A retry (signed anew) under the same id gets the stored answer, byte for byte, and books nothing more.
      const retry = await post(a, transferBody(platform, { amount: '3.00' }), {
        headers: { 'X-Request-Id': requestId },
      });
      expect(retry.status).toBe(201);
      expect(retry.text).toBe(idempotent.result.text);
      // The same id with another request: 422.
      const other = await post(a, transferBody(platform, { amount: '4.00' }), {
        headers: { 'X-Request-Id': requestId },
      });
      expect(other.status, other.text).toBe(422);
    });
    expect(await stored(account(platform, 'general'))).toEqual({ balance: '94', version: 4 });
    expect(await stored(account(platform, 'savings'))).toEqual({ balance: '6', version: 3 });
  });

  it('two instances booking alternately on the same accounts: exact balances and events, 2 calls when stale', {
    timeout: 120_000,
  }, async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '100');
    const post = clientOf(platform);
    const callsPerRequest: string[][] = [];
    await held(async () => {
      for (let i = 0; i < 10; i++) {
        const via = i % 2 === 0 ? a : b;
        const sent = await via.counted(() => post(via, transferBody(platform, { amount: `${i + 1}.00` })));
        expect(sent.result.status, sent.result.text).toBe(201);
        callsPerRequest.push(sent.calls);
      }
    });
    // From the third request on, each instance's kept states are stale (the other booked since): the transaction
    // fails on them, its cancellation returns the accounts as they are, and the second transaction commits. No
    // read at all, and never a third transaction.
    for (const calls of callsPerRequest.slice(2)) {
      expect(calls).toEqual(['TransactWriteItemsCommand', 'TransactWriteItemsCommand']);
    }
    const moved = 55; // 1 + 2 + ... + 10
    const general = await stored(account(platform, 'general'));
    expect(general).toEqual({ balance: String(100 - moved), version: 11 });
    expect(await stored(account(platform, 'savings'))).toEqual({ balance: String(moved), version: 10 });

    // Stale kept states are not contention: the account was never marked hot.
    const item = await ctx.db.send(new GetCommand(accountEntity.get(ctx.tables, account(platform, 'general'))));
    expect(item.Item?.hot_until_ms).toBeUndefined();

    // Each event's balance is the one before plus its change, in consecutive versions.
    for (const label of ['general', 'savings']) {
      const events = (
        await listEvents(platform, `&type=account_balance.changed&resource_id=${accountIdOf(account(platform, label))}`)
      ).sort((x, y) => x.sequence - y.sequence);
      let previous = new Money(0);
      for (const [index, event] of events.entries()) {
        expect(event.sequence).toBe(index + 1);
        const data = event.data as { balance: string; movement: { change: string } };
        expect(new Money(data.balance).toFixed()).toBe(previous.plus(data.movement.change).toFixed());
        previous = new Money(data.balance);
      }
      expect(events).toHaveLength(label === 'general' ? 11 : 10);
    }
    const report = (await runAdmin(['ledger', 'check', '--platform', platform.platformCode], { ctx })) as {
      clean: boolean;
      discrepancies: unknown[];
    };
    expect(report.discrepancies).toEqual([]);
    expect(report.clean).toBe(true);
  });

  it('a key revoked between two transfers on a warm function: the second is 403 and books nothing', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '100');
    const post = clientOf(platform);
    await held(async () => {
      expect((await post(a, transferBody(platform))).status).toBe(201);
      await revokeApiKey(ctx, platform.credentials.api_key);
      const refused = await post(a, transferBody(platform));
      expect(refused.status, refused.text).toBe(403);
      expect(refused.body).toEqual({ error: true, message: AuthenticationError.MESSAGE });
    });
    expect(await stored(account(platform, 'general'))).toEqual({ balance: '99', version: 2 });
  });

  it('the same signed bytes sent to two instances at once book once: 201 and 409, or the first answer twice with the same X-Request-Id', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '100');
    const post = clientOf(platform);
    // Both instances warm: the key, the participants and the accounts kept.
    await held(async () => {
      expect((await post(a, transferBody(platform))).status).toBe(201);
      expect((await post(b, transferBody(platform))).status).toBe(201);
      const timestamp = a.ctx.clock.nowSeconds();
      const body = transferBody(platform, { amount: '5.00' });
      const both = await Promise.all([post(a, body, { timestamp }), post(b, body, { timestamp })]);
      expect(both.map((response) => response.status).sort()).toEqual([201, 409]);
      expect(both.find((response) => response.status === 409)?.body.errors).toEqual([ALREADY_RECEIVED]);

      const requestId = randomUUID();
      const again = transferBody(platform, { amount: '7.00' });
      const headers = { 'X-Request-Id': requestId };
      const twice = await Promise.all([
        post(a, again, { timestamp: timestamp - 1, headers }),
        post(b, again, { timestamp: timestamp - 1, headers }),
      ]);
      expect(twice.map((response) => response.status)).toEqual([201, 201]);
      expect(twice[0]!.text).toBe(twice[1]!.text);
    });
    expect(await stored(account(platform, 'general'))).toEqual({ balance: String(100 - 2 - 5 - 7), version: 5 });
  });

  it('a transfer its transaction refuses leaves no claim: the same bytes, once funded, book once', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '1');
    const post = clientOf(platform);
    await held(async () => {
      const timestamp = a.ctx.clock.nowSeconds();
      const body = transferBody(platform, { amount: '5.00' });
      const requestId = randomUUID();
      const headers = { 'X-Request-Id': requestId };
      const idempotentBody = transferBody(platform, { amount: '6.00' });
      for (const refused of [
        await post(a, body, { timestamp }),
        await post(a, idempotentBody, { timestamp, headers }),
      ]) {
        expect(refused.status, refused.text).toBe(400);
        expect(refused.body.errors[0]).toContain('insufficient USD balance');
      }
      // Refused, the request did nothing and claimed nothing: sent again once the money is there, it books, once.
      await fund(platform.participantCode, 'USD', '20');
      const booked = await post(a, body, { timestamp });
      expect(booked.status, booked.text).toBe(201);
      const replay = await post(a, body, { timestamp });
      expect(replay.status).toBe(409);
      expect(replay.body.errors).toEqual([ALREADY_RECEIVED]);

      const bookedWithId = await post(a, idempotentBody, { timestamp, headers });
      expect(bookedWithId.status, bookedWithId.text).toBe(201);
      const retried = await post(a, idempotentBody, { timestamp, headers });
      expect(retried.status).toBe(201);
      expect(retried.text).toBe(bookedWithId.text);
    });
    expect(await stored(account(platform, 'general'))).toEqual({ balance: String(21 - 5 - 6), version: 4 });
  });

  it('the same bytes again after a transfer that emptied the account: 409 already received, not insufficient funds', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '5');
    const post = clientOf(platform);
    await held(async () => {
      const timestamp = a.ctx.clock.nowSeconds();
      const body = transferBody(platform, { amount: '5.00' });
      expect((await post(a, body, { timestamp })).status).toBe(201);
      for (const via of [a, b]) {
        const replay = await post(via, body, { timestamp });
        expect(replay.status, replay.text).toBe(409);
        expect(replay.body.errors).toEqual([ALREADY_RECEIVED]);
      }
    });
    expect(await stored(account(platform, 'general'))).toEqual({ balance: '0', version: 2 });
  });
});

describe('POST /liquidity/execute on a warm function', () => {
  it('is two calls: the quote read and the transaction', async () => {
    // The price other files give the pair too (files share the database).
    await setPrice('DOGE', 'USD', '0.25');
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '1000');
    const usedSignatures = new Set<string>();
    const request = (method: string, path: string, body?: unknown) =>
      send(method, path, body, { credentials: platform.credentials, via: a.service, usedSignatures });
    const execute = async () => {
      const quote = await request('GET', '/liquidity/rfq?side=buy&underlying=DOGE&quoted_currency=USD&quantity=10');
      expect(quote.status, quote.text).toBe(200);
      return a.counted(() => request('POST', '/liquidity/execute', { quote_id: quote.body.message.quote_id }));
    };
    await held(async () => {
      expect((await execute()).result.status).toBe(200);
      const warm = await execute();
      expect(warm.result.status, warm.result.text).toBe(200);
      expect(warm.calls).toEqual(['GetItemCommand', 'TransactWriteItemsCommand']);
    });
  });
});

describe('POST /rewards and POST /awards/fund on a warm function', () => {
  it('are two calls: the platform, the price (and the customer of a reward) in one read, then the transaction', async () => {
    await setPrice('DOGE', 'USD', '0.25');
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '1000');
    const [customer] = await customersViaHttp(platform, 1);
    const usedSignatures = new Set<string>();
    const post = (path: string, body: unknown, requestId?: string) =>
      send('POST', path, body, {
        credentials: platform.credentials,
        via: a.service,
        usedSignatures,
        headers: requestId ? { 'X-Request-Id': requestId } : {},
      });
    const reward = { underlying: 'DOGE', quoted_currency: 'USD', quantity: '10', participant_code: customer };
    const funding = { underlying: 'DOGE', quoted_currency: 'USD', quantity: '10' };
    await held(async () => {
      // The first of each warms the context: the key, the accounts' states.
      expect((await a.counted(() => post('/rewards', reward))).result.status).toBe(201);
      expect((await a.counted(() => post('/awards/fund', funding))).result.status).toBe(201);
      for (const [path, body] of [
        ['/rewards', reward],
        ['/awards/fund', funding],
      ] as const) {
        for (const requestId of [undefined, randomUUID()]) {
          const warm = await a.counted(() => post(path, body, requestId));
          expect(warm.result.status, `${path}: ${warm.result.text}`).toBe(201);
          // The key's check, the signature's claim and the X-Request-Id's record ride in the transaction.
          expect(warm.calls, path).toEqual(['BatchGetItemCommand', 'TransactWriteItemsCommand']);
        }
      }
    });
    // Three rewards of 10 DOGE to the customer, each paid once.
    const accounts = await platform.get(`/accounts?account_owner=${customer}`);
    expect(accounts.body.message.find((account: { asset: string }) => account.asset === 'DOGE')?.balance).toMatch(
      /^30(\.0+)?$/,
    );
  });
});

describe('a booking that carries its claims, behind a hot account', () => {
  it('POST /liquidity/execute makes its claims apart and queues without running again: its quote read once, executed though it expired meanwhile', async () => {
    await setPrice('DOGE', 'USD', '0.25');
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '1000');
    const usd: AccountRef = {
      participant_code: platform.participantCode,
      account_group: platform.platformCode,
      account_label: 'general',
      asset: 'USD',
    };
    let executing: string[] | undefined;
    let quoteId = '';
    const late = testContext({
      db: clientWith(
        (next, commandContext) => async (args) => {
          const input = (args as unknown as { input?: { TableName?: string } }).input;
          const quoteRead = commandContext.commandName === 'GetItemCommand' && JSON.stringify(input).includes(quoteId);
          const table = input?.TableName === ctx.tables.ttl ? 'ttl' : 'main';
          executing?.push(quoteRead ? 'quote read' : `${commandContext.commandName} ${table}`);
          // The signature's replay claim made apart, once the booking found the account hot: the quote's
          // 30 s are over by then, which must not matter to a request that came in time.
          if (executing && commandContext.commandName === 'PutItemCommand' && input?.TableName === ctx.tables.ttl)
            late.clock.advance(31_000);
          return next(args);
        },
        'expireQuoteWhileClaiming',
        'initialize',
      ),
    });
    const service = serviceFor(late);
    const quote = await send(
      'GET',
      '/liquidity/rfq?side=buy&underlying=DOGE&quoted_currency=USD&quantity=10',
      undefined,
      {
        credentials: platform.credentials,
        via: service,
      },
    );
    expect(quote.status, quote.text).toBe(200);
    await markHot(usd);

    quoteId = quote.body.message.quote_id;
    executing = [];
    const executed = await send(
      'POST',
      '/liquidity/execute',
      { quote_id: quote.body.message.quote_id },
      { credentials: platform.credentials, via: service },
    );
    const calls = executing;
    executing = undefined;
    expect(executed.status, executed.text).toBe(200);
    expect(executed.body.message.trade_id).toEqual(expect.any(String));
    // The signature claimed apart once the booking found the account hot, and the quote not read again.
    expect(calls.filter((call) => call === 'quote read')).toHaveLength(1);
    expect(calls.filter((call) => call === 'PutItemCommand ttl')).toHaveLength(1);
    expect(calls.indexOf('quote read')).toBeLessThan(calls.indexOf('PutItemCommand ttl'));
    const held = await late.db.send(
      new GetCommand({ TableName: ctx.tables.main, Key: accountEntity.key(usd), ConsistentRead: true }),
    );
    expect(new Money(String(held.Item?.balance)).toFixed(2)).toBe(
      new Money('1000').minus(quote.body.message.total_notional).toFixed(2),
    );
  });

  it('POST /rewards with X-Request-Id: priced once, paid once, its retry and its replay answered the same', async () => {
    await setPrice('DOGE', 'USD', '0.25');
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '1000');
    const [customer] = await customersViaHttp(platform, 1);
    await markHot(account(platform, 'general'));
    const requestId = randomUUID();
    const reward = { underlying: 'DOGE', quoted_currency: 'USD', quantity: '10', participant_code: customer };
    const priceKey = priceEntity.key({ underlying: 'DOGE', quoted_currency: 'USD' });
    expect(priceKey.pk).toMatch(/DOGE/);
    let calls: string[] | undefined;
    const counting = testContext({
      db: clientWith(
        (next, commandContext) => async (args) => {
          const input = (args as unknown as { input?: { TableName?: string } }).input;
          const pricing =
            commandContext.commandName === 'BatchGetItemCommand' && JSON.stringify(input).includes(String(priceKey.pk));
          const table = input?.TableName === ctx.tables.ttl ? 'ttl' : 'main';
          calls?.push(pricing ? 'pricing read' : `${commandContext.commandName} ${table}`);
          return next(args);
        },
        'countPricingReads',
        'initialize',
      ),
    });
    const service = serviceFor(counting);
    const timestamp = Math.floor(Date.now() / 1000);
    const post = (options: { timestamp?: number } = {}) =>
      send('POST', '/rewards', reward, {
        credentials: platform.credentials,
        via: service,
        headers: { 'X-Request-Id': requestId },
        ...options,
      });
    calls = [];
    const first = await post({ timestamp });
    const made = calls;
    calls = undefined;
    expect(first.status, first.text).toBe(201);
    // Priced once: the booking that found the account hot queued with its claims made apart (the signature's
    // claim and the X-Request-Id's run, one PutItem each), and its use case did not run again.
    expect(made.filter((call) => call === 'pricing read')).toHaveLength(1);
    expect(made.filter((call) => call === 'PutItemCommand ttl')).toHaveLength(2);
    const retried = await post();
    expect(retried.status).toBe(201);
    expect(retried.text).toBe(first.text);
    // The same signed bytes again: the first answer (its X-Request-Id's), nothing booked.
    const replayed = await post({ timestamp });
    expect(replayed.status).toBe(201);
    expect(replayed.text).toBe(first.text);
    const accounts = await platform.get(`/accounts?account_owner=${customer}`);
    expect(accounts.body.message.find((entry: { asset: string }) => entry.asset === 'DOGE')?.balance).toMatch(
      /^10(\.0+)?$/,
    );
  });
});
