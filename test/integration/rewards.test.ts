import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { issueReward } from '../../lib/rewards/issue-reward.js';
import {
  beginIdempotentRequest,
  IN_PROGRESS_LEASE_MS,
  requestCompletionItem,
  type IdempotentRun,
} from '../../lib/store/windows.js';
import { serviceCrashingAfterCommit } from '../support/faults.js';
import { customersViaHttp } from '../support/customers.js';
import { balances, fund } from '../support/ledger.js';
import { setPrice } from '../support/pricing.js';
import { newPlatform, type TestPlatform } from '../support/service.js';
import { ctx } from '../support/context.js';
import { eventCapture } from '../support/events.js';

const capture = eventCapture();

// Prices are shared by every test file of the run; this file prices ETH/USD and SOL/EUR only.
beforeAll(async () => {
  await setPrice('ETH', 'USD', '2000');
  await setPrice('SOL', 'EUR', '125');
});

const ETH = (amount: string) => amount.padEnd(amount.indexOf('.') + 19, '0');

describe('POST /rewards', () => {
  let platform: TestPlatform;
  let customers: string[];
  beforeAll(async () => {
    platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '100000');
    await fund(platform.participantCode, 'EUR', '1000');
    customers = await customersViaHttp(platform, 4);
  });

  const reward = (overrides: Record<string, unknown> = {}) => ({
    underlying: 'ETH',
    quoted_currency: 'USD',
    quantity: '0.5',
    participant_code: customers[0],
    ...overrides,
  });

  it('with X-Request-Id: 201 with the quote and a settled trade; the same again returns the identical body and credits once', async () => {
    const requestId = randomUUID();
    const response = await platform.post('/rewards', reward(), { headers: { 'X-Request-Id': requestId } });
    expect(response.status, response.text).toBe(201);
    expect(response.headers.get('x-request-id')).toBe(requestId);
    const message = response.body.message;
    expect(message).toEqual({
      request_id: requestId,
      quote: {
        request_id: requestId,
        participant_code: customers[0],
        quoted_currency: 'USD',
        side: 'buy',
        quantity: ETH('0.5'),
        price: '2000',
        quote_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        expire_ts: expect.any(Number),
        account_group: platform.platformCode,
        account_label: 'general',
        obo_participant: {
          participant_code: customers[0],
          account_group: platform.platformCode,
          account_label: 'general',
        },
        underlying: 'ETH',
        total_notional: '1000.00',
        asset_cost_notional: '1000.00',
        spread_notional: '0.00',
        spread_bps: '0',
        settlement_type: null,
        issuer_fee_payor_type: null,
        issuer_fee_rate: null,
        issuer_fee_amount: null,
        payment_processor: null,
        underlying_currency: 'ETH',
        transaction_timestamp: expect.any(Number),
      },
      trade_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      trade_ids_list: [message.trade_id],
      status: 'Completed',
      asset_cost_notional: '1000.00',
    });

    const after = await balances(platform);
    expect(after[`${customers[0]}/general/ETH`]).toBe(ETH('0.5'));
    expect(after[`${platform.participantCode}/general/USD`]).toBe('99000.00');

    const trade = await platform.get(`/trades/${message.trade_id}`);
    expect(trade.status).toBe(200);
    expect(trade.body.message).toMatchObject({
      client_trade_id: message.quote.quote_id,
      trade_state: 'terminated',
      settlement_state: 'settled',
      symbol: 'ETH/USD',
    });
    expect(trade.body.message.parties[0]).toMatchObject({
      side: 'buy',
      participant_code: customers[0],
      asset: 'ETH',
      amount: ETH('0.5'),
    });

    const again = await platform.post('/rewards', reward(), { headers: { 'X-Request-Id': requestId } });
    expect(again.status).toBe(201);
    expect(again.text).toBe(response.text);
    expect(await balances(platform)).toEqual(after);

    // Same id, another total: 422, and nothing moves.
    const changed = await platform.post('/rewards', reward({ quantity: undefined, total: '10.00' }), {
      headers: { 'X-Request-Id': requestId },
    });
    expect(changed.status).toBe(422);
    expect(changed.body).toEqual({ errors: ['X-Request-Id: already used with a different request'] });
    expect(await balances(platform)).toEqual(after);
  });

  it('a retry whose first run booked but died before answering gets the booked result, not a second reward', async () => {
    const requestId = randomUUID();
    const via = serviceCrashingAfterCommit();
    const first = await platform.post('/rewards', reward({ participant_code: customers[1], quantity: '0.25' }), {
      headers: { 'X-Request-Id': requestId },
      via,
    });
    expect(first.status).toBe(500);
    const before = await balances(platform);
    expect(before[`${customers[1]}/general/ETH`]).toBe(ETH('0.25'));

    const retry = await platform.post('/rewards', reward({ participant_code: customers[1], quantity: '0.25' }), {
      headers: { 'X-Request-Id': requestId },
    });
    expect(retry.status).toBe(201);
    expect(retry.body.message.quote.quantity).toBe(ETH('0.25'));
    expect(await balances(platform)).toEqual(before);
    // Another body under the id is refused (422), whatever it asks, and moves nothing.
    for (const changed of [
      { quantity: '0.5' },
      { participant_code: customers[2] },
      { quantity: undefined, total: '250' },
      { account_label: 'rewards' },
    ]) {
      const other = await platform.post(
        '/rewards',
        reward({ participant_code: customers[1], quantity: '0.25', ...changed }),
        { headers: { 'X-Request-Id': requestId } },
      );
      expect(other.status, JSON.stringify(changed)).toBe(422);
      expect(other.body).toEqual({ errors: ['X-Request-Id: already used with a different request'] });
    }
    expect(await balances(platform)).toEqual(before);
  });

  it('runs of one request racing past the middleware (its lease lapsed, another run took over) still book once', async () => {
    const [customer] = await customersViaHttp(platform, 1);
    const auth = {
      platformCode: platform.platformCode,
      participantCode: platform.participantCode,
      apiKey: 'test',
      permissions: [],
    };
    const requestId = randomUUID();
    // Each run owns the record in turn: the first begins, its lease lapses, the next takes over, and so on.
    const runs: IdempotentRun[] = [];
    for (let i = 0; i < 5; i++) {
      const run = { platformCode: platform.platformCode, requestId, owner: randomUUID() };
      expect(
        (await beginIdempotentRequest(ctx, run, 'hash', ctx.clock.nowMs() + i * (IN_PROGRESS_LEASE_MS + 1))).kind,
      ).toBe('started');
      runs.push(run);
    }
    const claimOf = (run: (typeof runs)[number]) => (message: unknown) => [
      requestCompletionItem(ctx, run, { statusCode: 201, headers: {}, body: JSON.stringify({ message }) }),
    ];
    const results = await Promise.allSettled(
      runs.map((run) =>
        issueReward(
          ctx,
          auth,
          { underlying: 'ETH', quoted_currency: 'USD', quantity: '0.02', participant_code: customer! },
          requestId,
          claimOf(run),
        ),
      ),
    );
    // Only the run that owns the record now can commit; the others' bookings fail whole.
    expect(results.map((result) => result.status)).toEqual([
      'rejected',
      'rejected',
      'rejected',
      'rejected',
      'fulfilled',
    ]);
    expect((await balances(platform))[`${customer}/general/ETH`]).toBe(ETH('0.02'));
  });

  it('with total instead of quantity, in another currency and into a named account', async () => {
    const response = await platform.post('/rewards', {
      underlying: 'SOL',
      quoted_currency: 'EUR',
      total: '50',
      participant_code: customers[2],
      account_label: 'rewards',
    });
    expect(response.status, response.text).toBe(201);
    expect(response.body.message.quote).toMatchObject({
      quantity: '0.400000000',
      total_notional: '50.00',
      account_label: 'rewards',
    });
    const after = await balances(platform);
    expect(after[`${customers[2]}/rewards/SOL`]).toBe('0.400000000');
    expect(after[`${platform.participantCode}/general/EUR`]).toBe('950.00');
  });

  it('refuses quantity and total together with 400', async () => {
    const response = await platform.post('/rewards', reward({ total: '10' }));
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual(['quantity: give exactly one of quantity or total, not both']);
  });

  it('refuses an unknown customer, the platform itself and another platform’s customer with 400, moving nothing', async () => {
    const before = await balances(platform);
    const other = await newPlatform();
    const [foreign] = await customersViaHttp(other, 1);
    for (const code of ['NOPE42', platform.participantCode, foreign!]) {
      const response = await platform.post('/rewards', reward({ participant_code: code }));
      expect(response.status).toBe(400);
      expect(response.body.errors).toEqual([`participant_code: no customer '${code}' of this platform`]);
    }
    expect(await balances(platform)).toEqual(before);
  });

  it('reports every field problem at once', async () => {
    const response = await platform.post('/rewards', {
      underlying: 'XYZ',
      quoted_currency: 'BTC',
      participant_code: 'NOPE42',
    });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([
      "underlying: unknown asset 'XYZ'",
      'quoted_currency: BTC is not a fiat currency',
      'quantity: exactly one of quantity or total is required',
      "participant_code: no customer 'NOPE42' of this platform",
    ]);
  });

  it('refuses a reward the platform cannot pay for with 400 and moves nothing', async () => {
    const poor = await newPlatform();
    const [customer] = await customersViaHttp(poor, 1);
    await fund(poor.participantCode, 'USD', '10');
    const response = await poor.post('/rewards', reward({ participant_code: customer, quantity: '0.01' }));
    expect(response.status).toBe(400);
    expect(response.body.errors[0]).toMatch(/insufficient USD balance/);
    expect(await balances(poor)).toEqual({ [`${poor.participantCode}/general/USD`]: '10.00' });
  });

  it('50 concurrent rewards with one X-Request-Id book exactly one trade', async () => {
    const requestId = randomUUID();
    const customer = customers[3]!;
    const body = reward({ participant_code: customer, quantity: '0.01' });
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => platform.post('/rewards', body, { headers: { 'X-Request-Id': requestId } })),
    );

    const statuses = responses.map((response) => response.status);
    // The first gets 201; the others either arrive while it runs (409) or after it (its stored 201, replayed).
    expect(statuses.every((status) => status === 201 || status === 409)).toBe(true);
    const created = responses.filter((response) => response.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((response) => response.text)).size).toBe(1);
    for (const conflict of responses.filter((response) => response.status === 409)) {
      expect(conflict.body.errors).toEqual(['X-Request-Id: a request with this id is still in progress']);
    }

    expect((await balances(platform))[`${customer}/general/ETH`]).toBe(ETH('0.01'));
    const trades = await platform.get('/trades');
    const hers = trades.body.message.filter((trade: any) =>
      trade.parties.some((party: any) => party.participant_code === customer),
    );
    expect(hers.map((trade: any) => trade.trade_id)).toEqual([created[0]!.body.message.trade_id]);
  });
});

describe('trade.status_changed of a reward', () => {
  it('tells the platform of the reward trade once, settled, with the trade as GET /trades/{trade_id} shows it', async () => {
    const platform = await newPlatform();
    const subscription = await capture.subscribe(platform);
    await fund(platform.participantCode, 'USD', '100');
    const [customer] = await customersViaHttp(platform, 1);
    const response = await platform.post('/rewards', {
      underlying: 'ETH',
      quoted_currency: 'USD',
      quantity: '0.01',
      participant_code: customer,
    });
    expect(response.status, response.text).toBe(201);
    const tradeId = response.body.message.trade_id as string;
    const [event] = await capture.received(subscription, (event) => event.type === 'trade.status_changed', 1);
    expect(event).toMatchObject({
      resource: { type: 'trade', id: tradeId },
      sequence: 1,
      previous_status: null,
      data: { trade_state: 'terminated', settlement_state: 'settled' },
    });
    expect(event!.data).toEqual((await platform.get(`/trades/${tradeId}`)).body.message);
    // The customer's ETH and the platform's USD each moved once.
    const balances = await capture.received(
      subscription,
      (event) => event.type === 'account_balance.changed' && event.data.movement.reference.includes(tradeId),
      2,
    );
    expect(balances.map((event) => event.data.participant_code).sort()).toEqual(
      [customer, platform.participantCode].sort(),
    );
  });
});
