import { ctx } from '../support/context.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '../../infra/ops/cli.js';
import { customersViaHttp } from '../support/customers.js';
import { fund } from '../support/ledger.js';
import { setPrice } from '../support/pricing.js';
import { newPlatform, type TestPlatform } from '../support/service.js';

/**
 * The response fields the reference API documents (trades, quotes, executions, rewards, awards),
 * asserted key by key on what this service answers through HTTP: `trade_ids_list` (first = `trade_id`) on
 * every execution, reward and award response, `asset_cost_notional` on rewards, the trade object's fields,
 * and every optional field present, null when it has no value.
 *
 * Prices are shared by every test file of the run: this file owns DOGE/USD and USDC/EUR.
 */

// EIP-55's own example address, valid for USDC (an ERC-20 here).
const ETH_ADDRESS = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';

/** The reference API's RFQQuote fields (the GET form's 200 body). */
const RFQ_QUOTE_FIELDS = [
  'request_id',
  'participant_code',
  'quoted_currency',
  'side',
  'quantity',
  'price',
  'quote_id',
  'expire_ts',
  'account_group',
  'account_label',
  'obo_participant',
  'total_notional',
  'settlement_type',
  'issuer_fee_payor_type',
  'issuer_fee_rate',
  'issuer_fee_amount',
  'underlying',
  'asset_cost_notional',
  'spread_notional',
  'spread_bps',
  'payment_processor',
];

/** The reference API's Trade fields ("All fields" variant). */
const TRADE_FIELDS = [
  'trade_id',
  'batch_trade_id',
  'client_trade_id',
  'trade_reporter',
  'trade_reporter_code',
  'reporting_party',
  'settlement_schedule',
  'platform_code',
  'market_identifier_code',
  'symbol',
  'product_type',
  'trade_type',
  'trade_price',
  'trade_quantity',
  'trade_state',
  'physical_delivery',
  'transaction_timestamp',
  'accepted_timestamp',
  'defaulted_timestamp',
  'settled_timestamp',
  'comment',
  'last_update',
  'parties_anonymous',
  'settlement_price_index_id',
  'contract_size',
  'underlying',
  'quoted_currency',
  'settlement_timestamp',
  'expiry_timestamp',
  'bank_fee',
  'spread_notional',
  'spread_bps',
  'issuer_fee_rate',
  'issuer_fee_amount',
  'issuer_fee_payor_type',
  'origin',
  'parties',
  'session_id',
  'payment_processor',
  'fees',
  'network_fee_notional',
  'network_fee_quantity',
  'total_notional',
  'asset_cost_notional',
];

/** The reference API's TradeParty fields. */
const PARTY_FIELDS = [
  'side',
  'participant_code',
  'asset',
  'amount',
  'liquidity_indicator',
  'client_order_id',
  'order_id',
  'obligations_outstanding_timestamp',
  'current_obligations_met_timestamp',
  'settlement_state',
  'execution_id',
  'settling',
  'account_label',
  'collateral_percentage',
  'account_profile',
  'trader',
  'zrn',
  'manual_order_indicator',
];

function expectFields(object: Record<string, unknown>, fields: readonly string[], what: string): void {
  const missing = fields.filter((field) => !(field in object) || object[field] === undefined);
  expect(missing, `${what} lacks documented fields`).toEqual([]);
}

async function expectTradeShape(platform: TestPlatform, tradeId: string): Promise<Record<string, any>> {
  const response = await platform.get(`/trades/${tradeId}`);
  expect(response.status, response.text).toBe(200);
  const trade = response.body.message;
  expectFields(trade, TRADE_FIELDS, 'trade');
  for (const party of trade.parties) expectFields(party, PARTY_FIELDS, 'trade party');
  expect(trade).toMatchObject({
    trade_id: tradeId,
    session_id: null,
    fees: [],
    batch_trade_id: null,
    payment_processor: null,
    origin: 'rest_api',
  });
  const seller = trade.parties.find((party: any) => party.side === 'sell');
  expect(trade.total_notional).toBe(seller.amount);
  expect(trade.asset_cost_notional).toBe(seller.amount);
  return trade;
}

let platform: TestPlatform;
let customer: string;
beforeAll(async () => {
  await setPrice('DOGE', 'USD', '0.25');
  await setPrice('USDC', 'EUR', '0.9');
  // The same USDC fee the convert-withdraw file sets: fees are shared by the run's files.
  await runAdmin(['fee', 'set', '--asset', 'USDC', '--quantity', '1.5', '--reason', 'test'], { ctx });
  platform = await newPlatform({ spreadBps: '40' });
  customer = (await customersViaHttp(platform, 1))[0]!;
  await fund(platform.participantCode, 'USD', '100000');
  await fund(customer!, 'EUR', '1000');
});

describe('reference response shapes', () => {
  it('GET /liquidity/rfq: every RFQQuote field; spread_notional is |price - reference| x quantity', async () => {
    const response = await platform.get(
      `/liquidity/rfq?side=buy&underlying=DOGE&quoted_currency=USD&quantity=1000&participant_code=${customer}`,
    );
    expect(response.status, response.text).toBe(200);
    const quote = response.body.message;
    expectFields(quote, RFQ_QUOTE_FIELDS, 'quote');
    // 0.25 + 40 bps = 0.251; 1,000 DOGE cost 251.00, of which 1.00 is spread.
    expect(quote).toMatchObject({
      price: '0.251',
      total_notional: '251.00',
      asset_cost_notional: '251.00',
      spread_notional: '1.00',
      spread_bps: '40',
      settlement_type: null,
      issuer_fee_payor_type: null,
      issuer_fee_rate: null,
      issuer_fee_amount: null,
      payment_processor: null,
      obo_participant: { participant_code: customer, account_group: platform.platformCode, account_label: 'general' },
    });
  });

  it('POST /liquidity/execute: trade_ids_list starts with trade_id; payment_amount null without ACH; the trade has every field', async () => {
    const quote = await platform.get('/liquidity/rfq?side=buy&underlying=DOGE&quoted_currency=USD&total=50');
    const response = await platform.post('/liquidity/execute', { quote_id: quote.body.message.quote_id });
    expect(response.status, response.text).toBe(200);
    const message = response.body.message;
    expect(Object.keys(message).sort()).toEqual([
      'payment_amount',
      'quote',
      'request_id',
      'status',
      'trade_id',
      'trade_ids_list',
    ]);
    expect(message.trade_ids_list[0]).toBe(message.trade_id);
    expect(message.payment_amount).toBeNull();
    expectFields(message.quote, RFQ_QUOTE_FIELDS, 'executed quote');
    const trade = await expectTradeShape(platform, message.trade_id);
    expect(trade.client_trade_id).toBe(quote.body.message.quote_id);
  });

  it('POST /rewards: trade_ids_list and asset_cost_notional (price x quantity in the quoted currency)', async () => {
    const response = await platform.post('/rewards', {
      underlying: 'DOGE',
      quoted_currency: 'USD',
      quantity: '100',
      participant_code: customer,
    });
    expect(response.status, response.text).toBe(201);
    const message = response.body.message;
    expect(message.trade_ids_list).toEqual([message.trade_id]);
    expect(message.asset_cost_notional).toBe('25.10');
    expect(message.status).toBe('Completed');
    expectFields(message.quote, RFQ_QUOTE_FIELDS, 'reward quote');
    await expectTradeShape(platform, message.trade_id);
  });

  it('POST /awards/fund and /awards/distribute: trade_ids_list on the funding and on every confirm', async () => {
    const funded = await platform.post('/awards/fund', { underlying: 'DOGE', quoted_currency: 'USD', quantity: '20' });
    expect(funded.status, funded.text).toBe(201);
    expect(funded.body.message.trade_ids_list).toEqual([funded.body.message.trade_id]);
    await expectTradeShape(platform, funded.body.message.trade_id);

    const distributed = await platform.post('/awards/distribute', {
      asset: 'DOGE',
      quantity: '2',
      participant_codes: [customer],
      quoted_currency: 'USD',
    });
    expect(distributed.status, distributed.text).toBe(201);
    const [confirm] = distributed.body.message.confirms;
    expect(confirm).toEqual({
      participant_code: customer,
      trade_id: expect.any(String),
      trade_ids_list: [confirm.trade_id],
    });
    await expectTradeShape(platform, confirm.trade_id);
  });

  it('POST /convert_withdraw/execute: trade_ids_list beside withdrawal_request_id', async () => {
    const quote = await platform.get(
      `/convert_withdraw/rfq?side=buy&underlying=USDC&quoted_currency=EUR&quantity=10&participant_code=${customer}&withdrawal_address=${ETH_ADDRESS}`,
    );
    expect(quote.status, quote.text).toBe(200);
    expectFields(
      quote.body.message,
      [...RFQ_QUOTE_FIELDS, 'network_fee_notional', 'network_fee_quantity', 'withdrawal_address'],
      'convert quote',
    );
    const response = await platform.post('/convert_withdraw/execute', { quote_id: quote.body.message.quote_id });
    expect(response.status, response.text).toBe(200);
    const message = response.body.message;
    expect(message.trade_ids_list).toEqual([message.trade_id]);
    expect(message.withdrawal_request_id).toEqual(expect.any(String));
    await expectTradeShape(platform, message.trade_id);
  });
});

describe('reference read routes and the JSON-body quote', () => {
  it('POST /liquidity/rfq: the JSON-body form answers 201 with the same quote fields and rules as the GET form', async () => {
    const response = await platform.post('/liquidity/rfq', {
      side: 'buy',
      underlying: 'DOGE',
      quoted_currency: 'USD',
      quantity: '1000',
      participant_code: customer,
      // Reference inputs for products not offered here: ignored.
      fees: [{ name: 'x', amount: '1', type: 'notional' }],
      settlement_type: 'STANDARD',
    });
    expect(response.status, response.text).toBe(201);
    expectFields(response.body.message, RFQ_QUOTE_FIELDS, 'POST quote');
    expect(response.body.message).toMatchObject({
      price: '0.251',
      total_notional: '251.00',
      participant_code: customer,
    });
    // Executable like a GET quote.
    await fund(customer, 'USD', '251');
    const executed = await platform.post('/liquidity/execute', { quote_id: response.body.message.quote_id });
    expect(executed.status, executed.text).toBe(200);

    const bad = await platform.post('/liquidity/rfq', {
      side: 'hold',
      underlying: 'DOGE',
      quoted_currency: 'USD',
      quantity: '1',
      total: '1',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.length).toBeGreaterThanOrEqual(2);
    const get = await platform.get('/liquidity/rfq?side=hold&underlying=DOGE&quoted_currency=USD&quantity=1&total=1');
    expect(bad.body.errors).toEqual(get.body.errors);
  });

  it('GET /index: the reference prices quotes come from, filterable by pair side', async () => {
    const response = await platform.get('/index?underlying=DOGE&quoted_currency=USD');
    expect(response.status, response.text).toBe(200);
    expect(response.body.message).toEqual([
      {
        underlying: 'DOGE',
        quoted_currency: 'USD',
        symbol: 'DOGE/USD',
        price: '0.25',
        timestamp: expect.any(Number),
        fresh: true,
      },
    ]);
    const all = await platform.get('/index');
    expect(all.body.message.map((price: any) => price.symbol)).toEqual(
      expect.arrayContaining(['DOGE/USD', 'USDC/EUR']),
    );
    const bad = await platform.get('/index?underlying=NOPE');
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual(["underlying: unknown asset 'NOPE'"]);
  });

  it('GET /withdrawals/requests/{id}: the convert-withdraw request in the reference fields; malformed 400, unknown and foreign 404', async () => {
    const quote = await platform.get(
      `/convert_withdraw/rfq?side=buy&underlying=USDC&quoted_currency=EUR&quantity=5&participant_code=${customer}&withdrawal_address=${ETH_ADDRESS}`,
    );
    const executed = await platform.post('/convert_withdraw/execute', { quote_id: quote.body.message.quote_id });
    expect(executed.status, executed.text).toBe(200);
    const id = executed.body.message.withdrawal_request_id;

    const response = await platform.get(`/withdrawals/requests/${id}`);
    expect(response.status, response.text).toBe(200);
    // A one-element array, as the reference answers: its clients read `message[0]`.
    expect(response.body.message).toHaveLength(1);
    expect(response.body.message[0]).toEqual({
      id,
      withdrawal_account_id: null,
      participant_code: customer,
      beneficiary_participant_code: null,
      sender_participant_code: null,
      requestor_participant_code: customer,
      requested_amount: '5.000000',
      settled_amount: null,
      status: 'PENDING',
      on_chain_status: 'PENDING',
      asset: 'USDC',
      network: 'ethereum',
      withdrawal_address: ETH_ADDRESS,
      account_group: platform.platformCode,
      account_label: 'general',
      transaction_id: null,
      input_data: null,
      requested_timestamp: expect.any(Number),
      created_timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      gas_price: null,
      client_withdrawal_request_id: null,
      fee_amount: '1.500000',
      withdrawal_fee: null,
      quoted_fee_amount: '1.500000',
      // 1.5 USDC at 0.9 EUR plus the platform's 40 bps: 1.3554 -> 1.36.
      quoted_fee_notional: '1.36',
      quoted_fee_asset: 'USDC',
      quoted_currency: 'EUR',
      trade_id: executed.body.message.trade_id,
      quote_id: quote.body.message.quote_id,
      parent_link_id: null,
      parent_link_id_source: null,
      amount_in_usd: null,
      contract_validation_id: null,
      recipient_instructions: null,
    });

    const malformed = await platform.get('/withdrawals/requests/not-a-uuid');
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors).toEqual(['id: must be a withdrawal request id (a UUID)']);
    const unknown = await platform.get('/withdrawals/requests/00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(404);
    const stranger = await newPlatform();
    const foreign = await stranger.get(`/withdrawals/requests/${id}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ error: expect.any(String) });
    expect(foreign.body.error.replace(id, '')).toBe(
      unknown.body.error.replace('00000000-0000-4000-8000-000000000000', ''),
    );
  });
});

describe('GET /withdrawals/requests', () => {
  it("lists the platform's withdrawal requests newest first, filtered by participant, asset and status, as a cursor list", async () => {
    const lister = await newPlatform();
    const [buyer] = await customersViaHttp(lister, 1);
    await fund(buyer!, 'EUR', '100');
    const ids: string[] = [];
    for (const quantity of ['2', '3', '4']) {
      const quote = await lister.get(
        `/convert_withdraw/rfq?side=buy&underlying=USDC&quoted_currency=EUR&quantity=${quantity}&participant_code=${buyer}&withdrawal_address=${ETH_ADDRESS}`,
      );
      const executed = await lister.post('/convert_withdraw/execute', { quote_id: quote.body.message.quote_id });
      expect(executed.status, executed.text).toBe(200);
      ids.push(executed.body.message.withdrawal_request_id);
    }
    const response = await lister.get('/withdrawals/requests');
    expect(response.status, response.text).toBe(200);
    expect(response.body).toMatchObject({ page: 1, page_size: 100, count: 3, total_pages: 1, next_cursor: null });
    expect(response.body.message.map((w: any) => w.id)).toEqual([...ids].reverse());
    expect(response.body.message.map((w: any) => w.requested_amount)).toEqual(['4.000000', '3.000000', '2.000000']);
    const single = await lister.get(`/withdrawals/requests/${ids[0]}`);
    expect([response.body.message[2]]).toEqual(single.body.message);

    const filtered = await lister.get(`/withdrawals/requests?participant_code=${buyer}&asset=USDC&status=PENDING`);
    expect(filtered.body.count).toBe(3);
    expect((await lister.get('/withdrawals/requests?status=CONFIRMED')).body).toMatchObject({ message: [], count: 0 });
    const lower = await lister.get('/withdrawals/requests?status=pending');
    expect(lower.status).toBe(400);
    expect(lower.body.errors[0]).toMatch(/^status: /);

    const first = await lister.get('/withdrawals/requests?page_size=2');
    expect(first.body.message).toHaveLength(2);
    const second = await lister.get(
      `/withdrawals/requests?page_size=2&cursor=${encodeURIComponent(first.body.next_cursor)}`,
    );
    expect(second.body.message.map((w: any) => w.id)).toEqual([ids[0]]);
    expect(second.body.next_cursor).toBeNull();

    // Another platform sees none of them.
    expect((await platform.get(`/withdrawals/requests?participant_code=${buyer}`)).body).toMatchObject({
      message: [],
      count: 0,
    });
  });
});
