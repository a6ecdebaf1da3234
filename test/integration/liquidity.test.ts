import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConflictError } from '../../lib/domain/errors.js';
import { Money } from '../../lib/domain/money.js';
import { setReferencePrice } from '../../lib/pricing/price-source.js';
import { getReferencePrice } from '../../lib/store/prices.js';
import { quoteExecutionItem } from '../../lib/store/quotes.js';
import { transactWrite } from '../../lib/store/table/transactions.js';
import { runAdmin } from '../../infra/ops/cli.js';
import { balances, fund } from '../support/ledger.js';
import { setPrice } from '../support/pricing.js';
import { newCustomer } from '../support/trade-parties.js';
import { newPlatform, type TestPlatform } from '../support/service.js';
import { ctx } from '../support/context.js';
import { eventCapture } from '../support/events.js';

const rfq = (params: Record<string, string>) => `/liquidity/rfq?${new URLSearchParams(params).toString()}`;
const buyBtc = (extra: Record<string, string> = {}) =>
  rfq({ side: 'buy', underlying: 'BTC', quoted_currency: 'USD', ...extra });
const sellBtc = (extra: Record<string, string> = {}) =>
  rfq({ side: 'sell', underlying: 'BTC', quoted_currency: 'USD', ...extra });

async function quote(platform: TestPlatform, path: string) {
  const response = await platform.get(path);
  expect(response.status, response.text).toBe(200);
  return response.body.message;
}

async function execute(platform: TestPlatform, quoteId: string, extra: Record<string, unknown> = {}) {
  return platform.post('/liquidity/execute', { quote_id: quoteId, ...extra });
}

const capture = eventCapture();

beforeAll(async () => {
  await setPrice('BTC', 'USD', '50000');
  await setPrice('SOL', 'USD', '150.5');
});

describe('GET /liquidity/rfq and POST /liquidity/execute', () => {
  it('buys 0.5 BTC at 50000: quote in the anchor shape, BTC +0.5 and USD -25000.00, a settled trade with client_trade_id = quote_id', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '30000');
    const requestId = randomUUID();
    const before = ctx.clock.nowMs();
    const response = await platform.get(buyBtc({ quantity: '0.5' }), { headers: { 'X-Request-Id': requestId } });
    expect(response.status, response.text).toBe(200);
    const message = response.body.message;
    expect(message).toEqual({
      request_id: requestId,
      participant_code: platform.participantCode,
      quoted_currency: 'USD',
      side: 'buy',
      quantity: '0.50000000',
      price: '50000',
      quote_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      expire_ts: expect.any(Number),
      account_group: platform.platformCode,
      account_label: 'general',
      obo_participant: null,
      underlying: 'BTC',
      total_notional: '25000.00',
      asset_cost_notional: '25000.00',
      spread_notional: '0.00',
      spread_bps: '0',
      settlement_type: null,
      issuer_fee_payor_type: null,
      issuer_fee_rate: null,
      issuer_fee_amount: null,
      payment_processor: null,
    });
    // The default lifetime is 30 seconds.
    expect(message.expire_ts - before).toBeGreaterThanOrEqual(30_000);
    expect(message.expire_ts - ctx.clock.nowMs()).toBeLessThanOrEqual(30_000);

    const executed = await execute(platform, message.quote_id);
    expect(executed.status, executed.text).toBe(200);
    expect(executed.body.message).toEqual({
      request_id: requestId,
      quote: message,
      trade_id: expect.any(String),
      trade_ids_list: [executed.body.message.trade_id],
      status: 'Completed',
      payment_amount: null,
    });

    const accounts = await balances(platform);
    expect(accounts[`${platform.participantCode}/general/BTC`]).toBe('0.50000000');
    expect(accounts[`${platform.participantCode}/general/USD`]).toBe('5000.00');

    const trade = await platform.get(`/trades/${executed.body.message.trade_id}`);
    expect(trade.status, trade.text).toBe(200);
    expect(trade.body.message).toMatchObject({
      trade_id: executed.body.message.trade_id,
      client_trade_id: message.quote_id,
      platform_code: platform.platformCode,
      symbol: 'BTC/USD',
      trade_price: '50000',
      trade_quantity: '0.50000000',
      trade_state: 'terminated',
      settlement_state: 'settled',
      product_type: 'spot',
    });
    const parties = trade.body.message.parties;
    expect(parties).toHaveLength(2);
    expect(parties[0]).toMatchObject({
      side: 'buy',
      participant_code: platform.participantCode,
      asset: 'BTC',
      amount: '0.50000000',
      settlement_state: 'settled',
    });
    expect(parties[1]).toMatchObject({ side: 'sell', asset: 'USD', amount: '25000.00', settlement_state: 'settled' });

    const listed = await platform.get(`/trades?client_trade_id=${message.quote_id}`);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.message.map((t: any) => t.trade_id)).toEqual([executed.body.message.trade_id]);
  });

  it('sells 0.2 BTC: USD is credited 10000.00 and BTC debited', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'BTC', '1');
    const message = await quote(platform, sellBtc({ quantity: '0.2' }));
    expect(message).toMatchObject({ side: 'sell', quantity: '0.20000000', total_notional: '10000.00' });
    const executed = await execute(platform, message.quote_id);
    expect(executed.status, executed.text).toBe(200);
    const accounts = await balances(platform);
    expect(accounts[`${platform.participantCode}/general/USD`]).toBe('10000.00');
    expect(accounts[`${platform.participantCode}/general/BTC`]).toBe('0.80000000');
  });

  it('quotes by total: 100.00 USD buys 0.00200000 BTC and debits exactly 100.00', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '100');
    const message = await quote(platform, buyBtc({ total: '100' }));
    expect(message).toMatchObject({ quantity: '0.00200000', total_notional: '100.00' });
    expect((await execute(platform, message.quote_id)).status).toBe(200);
    const accounts = await balances(platform);
    expect(accounts[`${platform.participantCode}/general/USD`]).toBe('0.00');
    expect(accounts[`${platform.participantCode}/general/BTC`]).toBe('0.00200000');
  });

  it.each([
    // 50000 × 0.0002025 = 10.125: half-even keeps the even cent (half-up would say 10.13).
    ['0.0002025', '10.12'],
    // 50000 × 0.0002035 = 10.175: the even cent is above.
    ['0.0002035', '10.18'],
    // 50000 × 0.0000025 = 0.125.
    ['0.0000025', '0.12'],
  ])(
    'rounds the computed total half to even at the cent: %s BTC -> %s USD, and books that amount',
    async (quantity, total) => {
      const platform = await newPlatform();
      await fund(platform.participantCode, 'USD', '20');
      const message = await quote(platform, buyBtc({ quantity }));
      expect(message.total_notional).toBe(total);
      expect((await execute(platform, message.quote_id)).status).toBe(200);
      const accounts = await balances(platform);
      expect(accounts[`${platform.participantCode}/general/USD`]).toBe(new Money('20').minus(total).toFixed(2));
    },
  );

  it('rounds a computed quantity half to even to the asset precision (SOL, 9 decimals)', async () => {
    const platform = await newPlatform();
    // 1.00 / 150.5 = 0.00664451827...: 9 decimals, rounded.
    const message = await quote(
      platform,
      rfq({ side: 'buy', underlying: 'SOL', quoted_currency: 'USD', total: '1.00' }),
    );
    expect(message).toMatchObject({ quantity: '0.006644518', total_notional: '1.00', price: '150.5' });
  });

  it('refuses an amount worth less than one cent', async () => {
    const platform = await newPlatform();
    const response = await platform.get(buyBtc({ quantity: '0.00000001' }));
    expect(response.status).toBe(400);
    expect(response.body.errors.join(' ')).toContain('too small');
  });

  it.each([
    ['both quantity and total', { quantity: '0.1', total: '100' }, 'not both'],
    ['neither quantity nor total', {}, 'exactly one'],
  ])('refuses %s with 400', async (_name, amounts, words) => {
    const platform = await newPlatform();
    const response = await platform.get(buyBtc(amounts));
    expect(response.status).toBe(400);
    expect(response.body.errors.join(' ')).toContain(words);
  });

  it('reports every problem of a request at once', async () => {
    const platform = await newPlatform();
    const response = await platform.get(
      rfq({ side: 'hold', underlying: 'XYZ', quoted_currency: 'BTC', quantity: '1.5', participant_code: 'NOBODY' }),
    );
    expect(response.status).toBe(400);
    const errors: string = response.body.errors.join(' | ');
    expect(errors).toContain('side:');
    expect(errors).toContain('underlying:');
    expect(errors).toContain('quoted_currency:');
    expect(errors).toContain('participant_code:');
  });

  it('refuses a quantity with more decimals than the asset allows', async () => {
    const platform = await newPlatform();
    const response = await platform.get(buyBtc({ quantity: '0.123456789' }));
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual(['quantity: at most 8 decimal places for BTC']);
  });

  it('accepts the spec sample side BUY in upper case', async () => {
    const platform = await newPlatform();
    const message = await quote(
      platform,
      rfq({ side: 'BUY', underlying: 'BTC', quoted_currency: 'USD', quantity: '0.01' }),
    );
    expect(message.side).toBe('buy');
  });

  it("quotes for a customer: obo_participant, the customer's own accounts move; another platform's customer is refused", async () => {
    const platform = await newPlatform();
    const customer = await newCustomer(platform.platformCode);
    await fund(customer, 'USD', '600');
    const message = await quote(
      platform,
      buyBtc({ quantity: '0.01', participant_code: customer, account_label: 'savings' }),
    );
    expect(message).toMatchObject({
      participant_code: customer,
      account_group: platform.platformCode,
      account_label: 'savings',
      obo_participant: { participant_code: customer, account_group: platform.platformCode, account_label: 'savings' },
    });
    // The savings label holds nothing yet, so the execution is refused until it is funded.
    const refused = await execute(platform, message.quote_id);
    expect(refused.status).toBe(400);
    await fund(customer, 'USD', '500', 'savings');
    const executed = await execute(platform, message.quote_id);
    expect(executed.status, executed.text).toBe(200);
    const accounts = await balances(platform);
    expect(accounts[`${customer}/savings/BTC`]).toBe('0.01000000');
    expect(accounts[`${customer}/savings/USD`]).toBe('0.00');
    expect(accounts[`${customer}/general/USD`]).toBe('600.00');

    const other = await newPlatform();
    const foreign = await other.get(buyBtc({ quantity: '0.01', participant_code: customer }));
    expect(foreign.status).toBe(400);
    expect(foreign.body.errors).toEqual([`participant_code: no participant '${customer}' of this platform`]);
    const locked = await newCustomer(platform.platformCode, 'locked');
    const lockedResponse = await platform.get(buyBtc({ quantity: '0.01', participant_code: locked }));
    expect(lockedResponse.status).toBe(400);
  });

  it("applies the platform's spread against the client: 25 bps buys at 50125 and sells at 49875", async () => {
    const platform = await newPlatform();
    await runAdmin(['platform', 'spread', '--platform', platform.platformCode, '--bps', '25', '--reason', 'test'], {
      ctx,
    });
    expect(await quote(platform, buyBtc({ quantity: '1' }))).toMatchObject({
      price: '50125',
      total_notional: '50125.00',
    });
    expect(await quote(platform, sellBtc({ quantity: '1' }))).toMatchObject({
      price: '49875',
      total_notional: '49875.00',
    });
  });

  it('executes a quote once: 6 concurrent executions give exactly one 200, the rest 409, and no 5xx', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '1000');
    const message = await quote(platform, buyBtc({ quantity: '0.001' }));
    const responses = await Promise.all(Array.from({ length: 6 }, () => execute(platform, message.quote_id)));
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409]);
    for (const response of responses.filter((r) => r.status === 409))
      expect(response.body.errors[0]).toContain('already been executed');
    const accounts = await balances(platform);
    expect(accounts[`${platform.participantCode}/general/USD`]).toBe('950.00');
    expect(accounts[`${platform.participantCode}/general/BTC`]).toBe('0.00100000');
    const trades = await platform.get(`/trades?client_trade_id=${message.quote_id}`);
    expect(trades.body.count).toBe(1);
    // The write itself refuses a second execution, whatever the read before it saw.
    await expect(
      transactWrite(ctx, [quoteExecutionItem(ctx, message.quote_id, randomUUID(), ctx.clock.nowMs())]),
    ).rejects.toBeInstanceOf(ConflictError);
  });

  it('refuses an unaffordable quote with 400 and writes nothing; the quote stays executable', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '100');
    const message = await quote(platform, buyBtc({ quantity: '1' }));
    const before = await balances(platform);
    const refused = await execute(platform, message.quote_id);
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0]).toContain('insufficient USD');
    expect(await balances(platform)).toEqual(before);
    const trades = await platform.get(`/trades?client_trade_id=${message.quote_id}`);
    expect(trades.body.count).toBe(0);
    await fund(platform.participantCode, 'USD', '49900');
    const executed = await execute(platform, message.quote_id);
    expect(executed.status, executed.text).toBe(200);
  });

  it('refuses an expired quote with 400', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '1000');
    const message = await quote(platform, buyBtc({ quantity: '0.001' }));
    try {
      ctx.clock.advance(30_001);
      const response = await execute(platform, message.quote_id);
      expect(response.status).toBe(400);
      expect(response.body.errors).toEqual(['quote_id: quote has expired']);
    } finally {
      ctx.clock.reset();
    }
    expect((await balances(platform))[`${platform.participantCode}/general/USD`]).toBe('1000.00');
  });

  it('still executes a quote a moment before it expires', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '1000');
    const message = await quote(platform, buyBtc({ quantity: '0.001' }));
    try {
      // The test clock is real time plus an offset: 5 s before the expiry leaves room for a slow machine.
      ctx.clock.advance(message.expire_ts - ctx.clock.nowMs() - 5_000);
      expect((await execute(platform, message.quote_id)).status).toBe(200);
    } finally {
      ctx.clock.reset();
    }
  });

  it("answers 404 for another platform's quote and for an unknown one", async () => {
    const owner = await newPlatform();
    const message = await quote(owner, buyBtc({ quantity: '0.001' }));
    const other = await newPlatform();
    await fund(other.participantCode, 'USD', '1000');
    const foreign = await execute(other, message.quote_id);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ error: `quote not found: ${message.quote_id}` });
    expect((await execute(other, randomUUID())).status).toBe(404);
  });

  it('refuses a missing quote_id with 400', async () => {
    const platform = await newPlatform();
    const response = await platform.post('/liquidity/execute', {});
    expect(response.status).toBe(400);
    expect(response.body.errors[0]).toMatch(/^quote_id:/);
  });

  it('answers 503 with Retry-After when the price is stale, and when there is none', async () => {
    const platform = await newPlatform();
    try {
      ctx.clock.advance(301_000);
      const stale = await platform.get(buyBtc({ quantity: '0.001' }));
      expect(stale.status).toBe(503);
      expect(stale.headers.get('retry-after')).toBe('30');
      expect(stale.body.errors).toEqual(['the price for BTC/USD is stale']);
    } finally {
      ctx.clock.reset();
    }
    const missing = await platform.get(rfq({ side: 'buy', underlying: 'DOGE', quoted_currency: 'EUR', quantity: '1' }));
    expect(missing.status).toBe(503);
    expect(missing.body.errors).toEqual(['no price available for DOGE/EUR']);
  });

  it('replays an execution sent again with the same X-Request-Id instead of refusing it', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '1000');
    const message = await quote(platform, buyBtc({ quantity: '0.001' }));
    const headers = { 'X-Request-Id': randomUUID() };
    const first = await platform.post('/liquidity/execute', { quote_id: message.quote_id }, { headers });
    const again = await platform.post('/liquidity/execute', { quote_id: message.quote_id }, { headers });
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect((await balances(platform))[`${platform.participantCode}/general/USD`]).toBe('950.00');
  });
});

describe('trade.status_changed of an execution', () => {
  it('tells of the executed trade once, terminated and settled from nothing, with the trade as GET /trades/{trade_id} shows it', async () => {
    const platform = await newPlatform();
    const subscription = await capture.subscribe(platform);
    await fund(platform.participantCode, 'USD', '1000');
    const executed = await execute(platform, (await quote(platform, buyBtc({ quantity: '0.01' }))).quote_id);
    expect(executed.status, executed.text).toBe(200);
    const tradeId = executed.body.message.trade_id as string;
    const [event] = await capture.received(subscription, (event) => event.type === 'trade.status_changed', 1);
    expect(event).toMatchObject({ resource: { type: 'trade', id: tradeId }, sequence: 1, previous_status: null });
    expect(event!.data).toEqual((await platform.get(`/trades/${tradeId}`)).body.message);
    expect(event!.data).toMatchObject({ trade_state: 'terminated', settlement_state: 'settled' });
  });
});

describe('price set (ops)', () => {
  const priceSet = (...args: string[]) => runAdmin(['price', 'set', ...args, '--reason', 'test'], { ctx });

  it('refuses unknown assets, a pair of one asset, and prices that are not positive decimals', async () => {
    await expect(priceSet('--underlying', 'XYZ', '--quoted-currency', 'USD', '--price', '1')).rejects.toThrow(
      "underlying: unknown asset 'XYZ'",
    );
    await expect(priceSet('--underlying', 'USD', '--quoted-currency', 'USD', '--price', '1')).rejects.toThrow(
      'must differ',
    );
    for (const price of ['0', '-1', '1e5', 'abc']) {
      // `--price=-1`: written apart, a value starting with a dash is refused by the parser before the price rules.
      await expect(priceSet('--underlying', 'ETH', '--quoted-currency', 'EUR', `--price=${price}`)).rejects.toThrow(
        'price:',
      );
    }
    await expect(priceSet('--underlying', 'ETH', '--quoted-currency', 'EUR', '--price', '-1')).rejects.toThrow(
      "Option '--price' argument is ambiguous",
    );
  });

  it('never lets an older observation replace a newer price', async () => {
    const now = ctx.clock.nowMs();
    // DOGE/EUR: a pair no other file prices (ETH/EUR here once made a convert-withdraw test pay 3,000 a coin).
    await setReferencePrice(ctx, 'DOGE', 'EUR', '3000', {}, now);
    await expect(setReferencePrice(ctx, 'DOGE', 'EUR', '2000', { force: true }, now - 1_000)).rejects.toThrow(
      'a newer price for DOGE/EUR is already stored',
    );
    expect((await getReferencePrice(ctx, 'DOGE', 'EUR'))?.price.toFixed()).toBe('3000');
  });

  it('refuses a spread of 10000 bps or more, and an unknown platform', async () => {
    const platform = await newPlatform();
    await expect(
      runAdmin(['platform', 'spread', '--platform', platform.platformCode, '--bps', '10000', '--reason', 'test'], {
        ctx,
      }),
    ).rejects.toThrow('spread');
    await expect(
      runAdmin(['platform', 'spread', '--platform', 'NOPE22', '--bps', '5', '--reason', 'test'], { ctx }),
    ).rejects.toThrow('platform not found');
  });
});
