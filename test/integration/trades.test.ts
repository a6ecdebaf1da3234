import { beforeAll, describe, expect, it } from 'vitest';
import { grantRelationship } from '../../lib/store/relationships.js';
import { balances, fund } from '../support/ledger.js';
import { newPlatform, type TestPlatform } from '../support/service.js';
import { newCustomer } from '../support/trade-parties.js';
import { isOutstanding, isTerminated, useTestWorkflows, tradeBody, waitForTrade } from '../support/trades.js';
import { ctx } from '../support/context.js';

useTestWorkflows({ sessionSeconds: 1 });

/** A platform with a buyer and a seller customer. */
async function market(): Promise<{ platform: TestPlatform; buyer: string; seller: string }> {
  const platform = await newPlatform();
  const [buyer, seller] = await Promise.all([newCustomer(platform.platformCode), newCustomer(platform.platformCode)]);
  return { platform, buyer, seller };
}

describe('POST /trades, then settlement', () => {
  it('accepts a funded spot trade and settles it: both legs move by exactly the computed amounts', async () => {
    const { platform, buyer, seller } = await market();
    await fund(buyer, 'USD', '30000');
    await fund(seller, 'BTC', '2');
    const body = tradeBody(platform, {
      buyer,
      seller,
      price: '50000.005',
      quantity: '0.5',
      overrides: { comment: 'desk 4', bank_fee: '1.50' },
    });

    const response = await platform.post('/trades', body);
    expect(response.status).toBe(200);
    const trade = response.body.message;
    expect(trade).toMatchObject({
      client_trade_id: body.client_trade_id,
      platform_code: platform.platformCode,
      symbol: 'BTC/USD',
      product_type: 'spot',
      trade_type: 'regular',
      trade_price: '50000.005',
      trade_quantity: '0.50000000',
      physical_delivery: true,
      parties_anonymous: false,
      comment: 'desk 4',
      bank_fee: '1.50',
      trade_state: 'accepted',
      settlement_state: null,
      settled_timestamp: null,
      defaulted_timestamp: null,
      current_obligations_met_timestamp: null,
      obligations_outstanding_timestamp: null,
      underlying: 'BTC',
      quoted_currency: 'USD',
      contract_size: 1,
      market_identifier_code: null,
      transaction_timestamp: body.transaction_timestamp,
    });
    expect(trade.trade_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(trade.accepted_timestamp).toBe(trade.last_update);
    // 0.5 × 50000.005 = 25000.0025 -> 25000.00 (half to even at the cent).
    expect(trade.parties).toEqual([
      expect.objectContaining({
        side: 'buy',
        participant_code: buyer,
        asset: 'BTC',
        amount: '0.50000000',
        settlement_state: null,
        obligations_outstanding_timestamp: null,
        current_obligations_met_timestamp: null,
      }),
      expect.objectContaining({
        side: 'sell',
        participant_code: seller,
        asset: 'USD',
        amount: '25000.00',
        settlement_state: null,
      }),
    ]);

    const settled = await waitForTrade(platform, trade.trade_id, isTerminated);
    expect(settled).toMatchObject({
      trade_state: 'terminated',
      settlement_state: 'settled',
      defaulted_timestamp: null,
    });
    expect(settled.settled_timestamp).toBeGreaterThanOrEqual(trade.accepted_timestamp);
    expect(settled.parties.map((p: any) => p.settlement_state)).toEqual(['settled', 'settled']);

    expect(await balances(platform)).toMatchObject({
      [`${buyer}/general/USD`]: '5000.00',
      [`${buyer}/general/BTC`]: '0.50000000',
      [`${seller}/general/BTC`]: '1.50000000',
      [`${seller}/general/USD`]: '25000.00',
    });
  });

  it('leaves an unfunded trade active with obligations outstanding, and settles it once both are funded', async () => {
    const { platform, buyer, seller } = await market();
    const response = await platform.post(
      '/trades',
      tradeBody(platform, { buyer, seller, price: '20000', quantity: '0.25' }),
    );
    expect(response.status).toBe(200);
    const tradeId = response.body.message.trade_id;

    const outstanding = await waitForTrade(platform, tradeId, isOutstanding);
    expect(outstanding.obligations_outstanding_timestamp).toEqual(expect.any(Number));
    expect(outstanding.parties.map((p: any) => p.settlement_state)).toEqual([
      'obligations_outstanding',
      'obligations_outstanding',
    ]);

    // Only the seller delivers: it has met its obligations, the buyer still hasn't.
    await fund(seller, 'BTC', '0.25');
    const half = await waitForTrade(
      platform,
      tradeId,
      (t) => t.parties[1].settlement_state === 'current_obligations_met',
    );
    expect(half).toMatchObject({ trade_state: 'active', settlement_state: 'obligations_outstanding' });
    expect(half.parties[0].settlement_state).toBe('obligations_outstanding');
    expect(half.parties[1].current_obligations_met_timestamp).toEqual(expect.any(Number));

    await fund(buyer, 'USD', '5000');
    const settled = await waitForTrade(platform, tradeId, isTerminated);
    expect(settled.settlement_state).toBe('settled');
    expect(await balances(platform)).toMatchObject({
      [`${buyer}/general/USD`]: '0.00',
      [`${buyer}/general/BTC`]: '0.25000000',
      [`${seller}/general/BTC`]: '0.00000000',
      [`${seller}/general/USD`]: '5000.00',
    });
  });

  it("settles a trade whose counterparty is Anonymous against the outside world, leaving only our party's accounts moved", async () => {
    const { platform, buyer } = await market();
    await fund(buyer, 'USD', '1000');
    const body = tradeBody(platform, {
      buyer,
      seller: 'Anonymous',
      price: '100',
      quantity: '1',
      symbol: 'SOL/USD',
      overrides: { parties_anonymous: true },
    });
    body.parties[1].settling = false;
    const response = await platform.post('/trades', body);
    expect(response.status).toBe(200);
    const settled = await waitForTrade(platform, response.body.message.trade_id, isTerminated);
    expect(settled.settlement_state).toBe('settled');
    expect(await balances(platform)).toMatchObject({
      [`${buyer}/general/USD`]: '900.00',
      [`${buyer}/general/SOL`]: '1.000000000',
    });
  });

  it('lets a platform trade with its own participant (parties_anonymous false) and customers of platforms it acts for', async () => {
    const { platform, buyer } = await market();
    const other = await newPlatform();
    const foreign = await newCustomer(other.platformCode);
    await grantRelationship(ctx, platform.platformCode, 'submits_platform_transfers_for', foreign);
    await fund(buyer, 'USD', '10');
    await fund(platform.participantCode, 'ETH', '1');
    const own = await platform.post(
      '/trades',
      tradeBody(platform, { buyer, seller: platform.participantCode, price: '10', quantity: '1', symbol: 'ETH/USD' }),
    );
    expect(own.status).toBe(200);
    const settled = await waitForTrade(platform, own.body.message.trade_id, isTerminated);
    expect(settled.settlement_state).toBe('settled');

    const withForeign = await platform.post(
      '/trades',
      tradeBody(platform, { buyer: foreign, seller: buyer, price: '10', quantity: '1', symbol: 'ETH/USD' }),
    );
    expect(withForeign.status).toBe(200);
    // The foreign customer's platform sees the trade too; a stranger doesn't.
    const tradeId = withForeign.body.message.trade_id;
    expect((await other.get(`/trades/${tradeId}`)).status).toBe(200);
    expect((await other.get(`/trades?party_code=${foreign}`)).body.message.map((t: any) => t.trade_id)).toEqual([
      tradeId,
    ]);
    expect((await (await newPlatform()).get(`/trades/${tradeId}`)).status).toBe(404);
  });
});

describe('POST /trades: client_trade_id', () => {
  it('takes a report without session_id, as reference clients send it, and answers session_id null', async () => {
    const { platform, buyer, seller } = await market();
    const { session_id: _absent, ...body } = tradeBody(platform, { buyer, seller });
    const response = await platform.post('/trades', body);
    expect(response.status, response.text).toBe(200);
    expect(response.body.message.session_id).toBeNull();
    const read = await platform.get(`/trades/${response.body.message.trade_id}`);
    expect(read.body.message.session_id).toBeNull();
    const withSession = await platform.post(
      '/trades',
      tradeBody(platform, { buyer, seller, overrides: { session_id: '20261125' } }),
    );
    expect(withSession.body.message.session_id).toBe('20261125');
  });

  it('is unique per platform for 72 hours: a duplicate is 409 and stores nothing', async () => {
    const { platform, buyer, seller } = await market();
    const body = tradeBody(platform, { buyer, seller });
    expect((await platform.post('/trades', body)).status).toBe(200);
    const again = await platform.post('/trades', { ...body, trade_price: '1' });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ errors: ['client_trade_id: already used in the last 72 hours'] });
    const listed = await platform.get(`/trades?client_trade_id=${body.client_trade_id}`);
    expect(listed.body.count).toBe(1);

    // Another platform may use the same id.
    const other = await market();
    const theirs = tradeBody(other.platform, {
      buyer: other.buyer,
      seller: other.seller,
      overrides: { client_trade_id: body.client_trade_id },
    });
    expect((await other.platform.post('/trades', theirs)).status).toBe(200);
  });

  it('only one of concurrent reports with the same id is accepted', async () => {
    const { platform, buyer, seller } = await market();
    const body = tradeBody(platform, { buyer, seller });
    const statuses = await Promise.all(
      Array.from({ length: 5 }, () => platform.post('/trades', body).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(4);
  });
});

describe('POST /trades: each rule fails and passes through HTTP', () => {
  let platform: TestPlatform;
  let buyer: string;
  let seller: string;
  beforeAll(async () => {
    ({ platform, buyer, seller } = await market());
  });

  const post = (body: Record<string, any>) => platform.post('/trades', body);
  const body = (overrides: Record<string, unknown> = {}) => tradeBody(platform, { buyer, seller, overrides });

  it('exactly two parties', async () => {
    const three = body();
    three.parties.push({ side: 'buy', participant_code: buyer, asset: 'BTC' });
    const rejected = await post(three);
    expect(rejected.status).toBe(400);
    expect(rejected.body.errors).toContain('parties: exactly 2 parties are supported, got 3');
    expect((await post(body())).status).toBe(200);
  });

  it('forwards need settlement_price_index_id', async () => {
    const rejected = await post(body({ product_type: 'forward' }));
    expect(rejected.status).toBe(400);
    expect(rejected.body.errors).toContain('settlement_price_index_id: required for forwards');
    const accepted = await post(
      body({
        product_type: 'forward',
        settlement_price_index_id: 'BTCUSD-FIX',
        expiry_timestamp: ctx.clock.nowMs() + 3_600_000,
      }),
    );
    expect(accepted.status).toBe(200);
    expect(accepted.body.message).toMatchObject({ product_type: 'forward', settlement_price_index_id: 'BTCUSD-FIX' });
  });

  it('physical_delivery must be true', async () => {
    const rejected = await post(body({ physical_delivery: false }));
    expect(rejected.status).toBe(400);
    expect(rejected.body.errors).toEqual(['physical_delivery: only true is supported (financial settlement is not)']);
    expect((await post(body({ physical_delivery: true }))).status).toBe(200);
  });

  it('method B: trade_price must be seller amount ÷ buyer amount to 20 figures', async () => {
    const methodB = (price: string) => {
      const b = body({ trade_price: price });
      delete b.trade_quantity;
      b.parties[0].amount = '2';
      b.parties[1].amount = '50001';
      return b;
    };
    const rejected = await post(methodB('25000.4'));
    expect(rejected.status).toBe(400);
    expect(rejected.body.errors).toEqual([
      expect.stringMatching(
        /^trade_price: must equal the seller's amount ÷ the buyer's amount to 20 significant figures/,
      ),
    ]);
    const accepted = await post(methodB('25000.5'));
    expect(accepted.status).toBe(200);
    expect(accepted.body.message.trade_quantity).toBe('2.00000000');
    expect(accepted.body.message.parties.map((p: any) => p.amount)).toEqual(['2.00000000', '50001.00']);
  });

  it('trade_quantity together with per-party amounts is refused', async () => {
    const both = body();
    both.parties[0].amount = '0.5';
    both.parties[1].amount = '25000';
    const rejected = await post(both);
    expect(rejected.status).toBe(400);
    expect(rejected.body.errors).toContain('trade_quantity: must be omitted when the parties carry amounts');
  });

  it('the platform_code is the caller, and the buyer receives the base', async () => {
    const rejected = await post(body({ platform_code: 'ZZZZZZ' }));
    expect(rejected.status).toBe(400);
    const swapped = body();
    swapped.parties[0].asset = 'USD';
    const wrongAsset = await post(swapped);
    expect(wrongAsset.status).toBe(400);
    expect(wrongAsset.body.errors).toContain('parties[0].asset: must be BTC (the buyer receives the base asset)');
  });

  it('bank_fee has at most 2 decimals', async () => {
    expect((await post(body({ bank_fee: '1.505' }))).body.errors).toEqual(['bank_fee: at most 2 decimal places']);
    expect((await post(body({ bank_fee: '1.5' }))).status).toBe(200);
  });

  it('parties must be participants the platform may report for: unknown, foreign and locked codes are 400', async () => {
    const other = await newPlatform();
    const foreign = await newCustomer(other.platformCode);
    const locked = await newCustomer(platform.platformCode, 'locked');
    for (const code of ['NOSUCH', foreign, locked]) {
      const rejected = await post(tradeBody(platform, { buyer: code, seller }));
      expect(rejected.status).toBe(400);
      expect(rejected.body.errors).toEqual([
        `parties[0].participant_code: no participant '${code}' that this platform may report trades for`,
      ]);
    }
    const reporting = await post(body({ reporting_party: foreign }));
    expect(reporting.status).toBe(400);
    expect(reporting.body.errors).toEqual([
      `reporting_party: no participant '${foreign}' that this platform has a relationship with`,
    ]);
    expect((await post(body({ reporting_party: seller }))).status).toBe(200);
  });

  it('parties_anonymous: Anonymous only when true, and false whenever the platform is a party', async () => {
    const anonymous = body({ parties_anonymous: true });
    anonymous.parties[1] = { side: 'sell', participant_code: 'Anonymous', asset: 'USD' };
    expect((await post(anonymous)).status).toBe(200);

    const notDeclared = body();
    notDeclared.parties[1] = { side: 'sell', participant_code: 'Anonymous', asset: 'USD' };
    expect((await post(notDeclared)).body.errors).toContain(
      "parties[1].participant_code: 'Anonymous' is only allowed when parties_anonymous is true",
    );

    const platformParty = tradeBody(platform, {
      buyer: platform.participantCode,
      seller: 'Anonymous',
      overrides: { parties_anonymous: true },
    });
    platformParty.parties[1].settling = false;
    expect((await post(platformParty)).body.errors).toContain(
      'parties_anonymous: must be false when the platform is itself a party',
    );
  });

  it('rounds computed amounts half to even at the quote precision (10 × 10,000.0008 -> 100,000.01)', async () => {
    const cases: [price: string, quantity: string, symbol: string, seller: string][] = [
      ['10000.0008', '10', 'BTC/USD', '100000.01'],
      ['0.125', '1', 'BTC/USD', '0.12'],
      ['0.135', '1', 'BTC/USD', '0.14'],
      ['1.0000005', '1', 'ETH/USDC', '1.000000'],
      ['1.0000015', '1', 'ETH/USDC', '1.000002'],
    ];
    for (const [price, quantity, symbol, expected] of cases) {
      const response = await post(tradeBody(platform, { buyer, seller, price, quantity, symbol }));
      expect(response.status).toBe(200);
      expect(response.body.message.parties[1].amount).toBe(expected);
    }
  });

  it('a trade_quantity sent as a JSON number is a 400, not a 500', async () => {
    const rejected = await post(body({ trade_quantity: 0.5 }));
    expect(rejected.status).toBe(400);
    expect(rejected.body.errors).toEqual([
      'trade_quantity: must be a decimal string such as "12.34" (no sign, no exponent)',
    ]);
  });

  it('a quantity finer than the base asset allows is refused, not rounded', async () => {
    const rejected = await post(tradeBody(platform, { buyer, seller, quantity: '0.123456789' }));
    expect(rejected.status).toBe(400);
    expect(rejected.body.errors).toEqual(['trade_quantity: at most 8 decimal places for BTC']);
  });

  it('ignores fields the service owns and unknown fields', async () => {
    const response = await post(
      body({ trade_state: 'terminated', trade_id: 'mine', settled_timestamp: 1, extra: 'x' }),
    );
    expect(response.status).toBe(200);
    expect(response.body.message).toMatchObject({ trade_state: 'accepted', settled_timestamp: null });
    expect(response.body.message.trade_id).not.toBe('mine');
    expect(response.body.message).not.toHaveProperty('extra');
  });

  it('answers every issue of an empty body at once', async () => {
    const response = await platform.post('/trades', {});
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual(
      expect.arrayContaining(['client_trade_id: required', 'parties: required', 'physical_delivery: must be true']),
    );
  });

  it('needs the trades permission', async () => {
    const limited = await newPlatform({ permissions: ['accounts'] });
    expect((await limited.post('/trades', body())).status).toBe(403);
    expect((await limited.get('/trades')).status).toBe(403);
  });
});

describe('GET /trades and GET /trades/{trade_id}', () => {
  let platform: TestPlatform;
  let buyer: string;
  let seller: string;
  const ids: string[] = [];
  const base = ctx.clock.nowMs() - 60_000;

  beforeAll(async () => {
    ({ platform, buyer, seller } = await market());
    await fund(buyer, 'USD', '100');
    await fund(seller, 'BTC', '1');
    const third = await newCustomer(platform.platformCode);
    // Five trades a second apart in transaction time; the last one is funded and settles, the others stay open.
    const specs = [
      { buyer: third, seller, reporting_party: seller, mic: 'XNAS' },
      { buyer, seller: third, reporting_party: null, mic: null },
      { buyer: third, seller, reporting_party: null, mic: 'XNAS' },
      { buyer, seller: third, reporting_party: third, mic: null },
      { buyer, seller, reporting_party: null, mic: null },
    ];
    for (const [index, spec] of specs.entries()) {
      const response = await platform.post(
        '/trades',
        tradeBody(platform, {
          buyer: spec.buyer,
          seller: spec.seller,
          price: '100',
          quantity: '1',
          overrides: {
            transaction_timestamp: base + index * 1000,
            reporting_party: spec.reporting_party,
            market_identifier_code: spec.mic,
          },
        }),
      );
      expect(response.status).toBe(200);
      ids.push(response.body.message.trade_id);
    }
    // The filters below count states: wait until every execution has had its first attempt, not just one.
    await Promise.all([
      waitForTrade(platform, ids[4]!, isTerminated),
      ...ids.slice(0, 4).map((id) => waitForTrade(platform, id, isOutstanding)),
    ]);
  });

  const listed = async (query: string) => {
    const response = await platform.get(`/trades${query}`);
    expect(response.status, response.text).toBe(200);
    return response.body;
  };
  const idsOf = (body: any) => body.message.map((t: any) => t.trade_id);

  it("lists the platform's trades newest transaction first, in the list envelope", async () => {
    const body = await listed('');
    expect(idsOf(body)).toEqual([...ids].reverse());
    expect(body).toMatchObject({ page: 1, page_size: 100, total_pages: 1, count: 5 });
    expect(body.message[0]).toMatchObject({ trade_state: 'terminated', settlement_state: 'settled' });
  });

  it('filters by states, parties, reporting party, market and client id', async () => {
    expect(idsOf(await listed('?trade_state=terminated'))).toEqual([ids[4]]);
    expect(idsOf(await listed('?settlement_state=settled'))).toEqual([ids[4]]);
    expect((await listed('?trade_state=active&settlement_state=obligations_outstanding')).count).toBe(4);
    expect((await listed('?settlement_state=null')).count).toBe(0);
    expect(idsOf(await listed(`?party_code=${buyer}`))).toEqual([ids[4], ids[3], ids[1]]);
    expect(idsOf(await listed(`?reporting_party=${seller}`))).toEqual([ids[0]]);
    expect(idsOf(await listed('?market_identifier_code=XNAS'))).toEqual([ids[2], ids[0]]);
    const one = await platform.get(`/trades/${ids[2]}`);
    expect(idsOf(await listed(`?client_trade_id=${one.body.message.client_trade_id}`))).toEqual([ids[2]]);
  });

  it('filters by transaction time: the reference brackets and the plain inclusive bounds, in ms or ns', async () => {
    expect(
      idsOf(await listed(`?transaction_timestamp[gte]=${base + 1000}&transaction_timestamp[lt]=${base + 3000}`)),
    ).toEqual([ids[2], ids[1]]);
    expect(idsOf(await listed(`?transaction_timestamp%5Bgt%5D=${base + 3000}`))).toEqual([ids[4]]);
    expect(idsOf(await listed(`?transaction_timestamp[e]=${base + 2000}`))).toEqual([ids[2]]);
    expect(idsOf(await listed(`?transaction_timestamp[lte]=${base}`))).toEqual([ids[0]]);
    expect(
      idsOf(await listed(`?transaction_timestamp_from=${base + 3000}&transaction_timestamp_to=${base + 4000}`)),
    ).toEqual([ids[4], ids[3]]);
    expect(idsOf(await listed(`?transaction_timestamp[gte]=${BigInt(base + 4000) * 1_000_000n}`))).toEqual([ids[4]]);
    const bad = await platform.get('/trades?transaction_timestamp_from=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatch(/^transaction_timestamp_from: /);
  });

  it('pages with page and page_size (default and maximum 100)', async () => {
    const second = await listed('?page=2&page_size=2');
    expect(idsOf(second)).toEqual([ids[2], ids[1]]);
    expect(second).toMatchObject({ page: 2, page_size: 2, total_pages: 3, count: 5 });
    expect((await platform.get('/trades?page_size=101')).status).toBe(400);
    expect((await platform.get('/trades?page=0')).status).toBe(400);
    expect((await platform.get('/trades?trade_state=settled')).status).toBe(400);
  });

  it('shows one trade with live states; another platform gets 404 and sees nothing in its list', async () => {
    const response = await platform.get(`/trades/${ids[4]}`);
    expect(response.status).toBe(200);
    expect(response.body.message).toMatchObject({
      trade_id: ids[4],
      trade_state: 'terminated',
      settlement_state: 'settled',
    });
    const stranger = await newPlatform();
    const hidden = await stranger.get(`/trades/${ids[4]}`);
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual({ error: `trade not found: ${ids[4]}` });
    expect((await stranger.get('/trades')).body.count).toBe(0);
    expect((await platform.get('/trades/no-such-trade')).status).toBe(404);
  });
});
