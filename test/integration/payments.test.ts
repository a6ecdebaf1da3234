import { bind as bindBankEventQueueModule } from '../../functions/payments/apply-bank-event.js';
import { runsAs } from '../support/functions.js';
const bindBankEventQueue = runsAs('functions/payments/apply-bank-event.ts', bindBankEventQueueModule);
import { replyToBankEvent } from '../../lib/payments/apply-bank-event.js';
import { record } from '../support/sqs.js';
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { getPayment } from '../../lib/store/payments.js';
import { grantRelationship } from '../../lib/store/relationships.js';
import { runAdmin } from '../../infra/ops/cli.js';
import { balances, fund, transferBody } from '../support/ledger.js';
import { achBuy, achFunding } from '../support/payments.js';
import { setPrice } from '../support/pricing.js';
import { newCustomer } from '../support/trade-parties.js';
import { newPlatform, type TestPlatform } from '../support/service.js';
import { ctx } from '../support/context.js';

// The event function's handler bound to this file's context, as Lambda binds it to its own.
/** One bank event, as the queue consumer applies each message (`functions/payments/apply-bank-event.ts`). */
const bankEvent = (event: unknown) => replyToBankEvent(ctx, event);

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** Grouping 1 of funding_details. */

async function quoteLtc(platform: TestPlatform, params: Record<string, string>) {
  const query = new URLSearchParams({ underlying: 'LTC', quoted_currency: 'USD', ...params }).toString();
  const response = await platform.get(`/liquidity/rfq?${query}`);
  expect(response.status, response.text).toBe(200);
  return response.body.message;
}

/** Quotes and executes with funding details; returns the execute response. */
async function executeAch(platform: TestPlatform, params: Record<string, string>, funding: unknown) {
  const quote = await quoteLtc(platform, params);
  const response = await platform.post('/liquidity/execute', { quote_id: quote.quote_id, funding_details: funding });
  return Object.assign(response, { quote });
}

async function payments(platform: TestPlatform, query = '') {
  const response = await platform.get(`/payments/status${query}`);
  expect(response.status, response.text).toBe(200);
  return response.body;
}

const clearingKey = (platform: TestPlatform) => `${platform.participantCode}/ach_clearing/USD`;

beforeAll(async () => {
  await setPrice('LTC', 'USD', '100');
  await setPrice('LTC', 'EUR', '90');
});

describe('bank events through the queue', () => {
  it("applies a payment's events in order, drops an illegal one, and reports nothing for redelivery", async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '1000', 'ach_clearing');
    const { transaction_id } = await achBuy(platform);
    const message = (id: string, status: string) =>
      record(id, transaction_id, JSON.stringify({ transaction_id, status }));
    const consume = bindBankEventQueue(ctx);
    const response = await consume(
      {
        Records: [message('m1', 'pending'), message('m2', 'posted'), message('m3', 'failed'), message('m4', 'posted')],
      },
      {} as never,
    );
    expect(response).toEqual({ batchItemFailures: [] });
    expect((await getPayment(ctx, transaction_id))?.status).toBe('posted');
  });
});

describe('ACH-funded execution', () => {
  it('buys with bank_fee 1.50 on total 100.00: payment_amount 101.50, one submitted debit of 101.50, fiat leg on the clearing account', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '1000', 'ach_clearing');
    const response = await executeAch(platform, { side: 'buy', total: '100.00' }, achFunding());
    expect(response.status, response.text).toBe(200);
    const { message } = response.body;
    expect(message).toEqual({
      request_id: response.quote.request_id,
      quote: response.quote,
      trade_id: expect.any(String),
      trade_ids_list: [message.trade_id],
      status: 'Completed',
      payment_amount: '101.50',
    });

    const listed = await payments(platform, `?trade_id=${message.trade_id}`);
    expect(listed).toEqual({
      message: [expect.any(Object)],
      page: 1,
      total_pages: 1,
      page_size: 200,
      count: 1,
      next_cursor: null,
    });
    expect(listed.message[0]).toEqual({
      transaction_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      trade_id: message.trade_id,
      participant_code: platform.participantCode,
      amount: '101.50',
      status: 'submitted',
      transfer_type: 'debit',
      bank_transfer_id: expect.stringMatching(/^\d{15}$/),
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });

    const accounts = await balances(platform);
    expect(accounts[`${platform.participantCode}/general/LTC`]).toBe('1.00000000');
    expect(accounts[clearingKey(platform)]).toBe('900.00');
    // The participant's own USD account was never touched.
    expect(accounts[`${platform.participantCode}/general/USD`]).toBeUndefined();

    const trade = await platform.get(`/trades/${message.trade_id}`);
    expect(trade.body.message).toMatchObject({
      client_trade_id: response.quote.quote_id,
      bank_fee: '1.50',
      trade_state: 'terminated',
    });
  });

  it('sells with bank_fee 1.5 given as a JSON number: a credit of 98.50, proceeds held in the clearing account', async () => {
    const platform = await newPlatform();
    const customer = await newCustomer(platform.platformCode);
    await fund(customer, 'LTC', '2');
    const response = await executeAch(
      platform,
      { side: 'sell', quantity: '1', participant_code: customer },
      achFunding({ bank_fee: 1.5 }),
    );
    expect(response.status, response.text).toBe(200);
    expect(response.body.message.payment_amount).toBe('98.50');
    const [payment] = (await payments(platform, `?trade_id=${response.body.message.trade_id}`)).message;
    expect(payment).toMatchObject({
      participant_code: customer,
      amount: '98.50',
      transfer_type: 'credit',
      status: 'submitted',
    });
    const accounts = await balances(platform);
    expect(accounts[`${customer}/general/LTC`]).toBe('1.00000000');
    expect(accounts[`${customer}/general/USD`]).toBeUndefined();
    expect(accounts[clearingKey(platform)]).toBe('100.00');
  });

  it('records inbound_reference_id (grouping 2) on a submitted payment of the trade amount', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '500', 'ach_clearing');
    const response = await executeAch(
      platform,
      { side: 'buy', total: '250' },
      { inbound_reference_id: 'INB-2024-0001' },
    );
    expect(response.status, response.text).toBe(200);
    expect(response.body.message.payment_amount).toBe('250.00');
    const [listed] = (await payments(platform, `?trade_id=${response.body.message.trade_id}`)).message;
    expect(listed).toMatchObject({ amount: '250.00', status: 'submitted', transfer_type: 'debit' });
    const stored = await getPayment(ctx, listed.transaction_id);
    expect(stored).toMatchObject({
      funding: 'inbound_reference',
      inbound_reference_id: 'INB-2024-0001',
      bank_fee: null,
      external_account_id: null,
    });
  });

  it.each([
    [
      'a description of 11 characters',
      achFunding({ description: 'ELEVENCHARS' }),
      'funding_details.description: at most 10 characters',
    ],
    ['both groupings', { ...achFunding(), inbound_reference_id: 'X-1' }, 'give exactly one grouping'],
    ['neither grouping', {}, 'must contain either'],
    [
      'a bank_fee with 3 decimals',
      achFunding({ bank_fee: '1.505' }),
      'funding_details.bank_fee: at most 2 decimal places',
    ],
    ['a negative bank_fee', achFunding({ bank_fee: -1 }), 'funding_details.bank_fee: must not be negative'],
    [
      'a bank_fee of 10^15 or more',
      achFunding({ bank_fee: `1${'0'.repeat(40)}` }),
      'funding_details.bank_fee: must be less than 1000000000000000',
    ],
    [
      'an external_account_id that is not a UUID',
      achFunding({ external_account_id: 'acct-1' }),
      'funding_details.external_account_id: must be a UUID',
    ],
  ])('refuses %s with 400 and writes nothing', async (_name, funding, words) => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '1000', 'ach_clearing');
    const before = await balances(platform);
    const response = await executeAch(platform, { side: 'buy', total: '100' }, funding);
    expect(response.status).toBe(400);
    expect(response.body.errors.join(' ')).toContain(words);
    expect(await balances(platform)).toEqual(before);
    expect((await payments(platform)).count).toBe(0);
    // Nothing was written, so the quote is still there to execute.
    const retried = await platform.post('/liquidity/execute', {
      quote_id: response.quote.quote_id,
      funding_details: achFunding(),
    });
    expect(retried.status, retried.text).toBe(200);
  });

  it('refuses ACH on a EUR quote, an inbound reference on a sell, and a sell fee that eats the trade', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '1000', 'ach_clearing');
    await fund(platform.participantCode, 'LTC', '5');
    const eur = await executeAch(platform, { side: 'buy', total: '90', quoted_currency: 'EUR' }, achFunding());
    expect(eur.status).toBe(400);
    expect(eur.body.errors[0]).toContain('ACH moves USD only');
    const inboundSell = await executeAch(platform, { side: 'sell', quantity: '1' }, { inbound_reference_id: 'R1' });
    expect(inboundSell.status).toBe(400);
    const feeTooLarge = await executeAch(
      platform,
      { side: 'sell', quantity: '0.01' },
      achFunding({ bank_fee: '1.00' }),
    );
    expect(feeTooLarge.status).toBe(400);
    expect(feeTooLarge.body.errors[0]).toContain('bank_fee: must be less than the trade amount');
    expect((await payments(platform)).count).toBe(0);
  });

  it('refuses an ACH buy the clearing account cannot front with 400 and writes nothing', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '5000');
    await fund(platform.participantCode, 'USD', '50', 'ach_clearing');
    const before = await balances(platform);
    const response = await executeAch(platform, { side: 'buy', total: '100' }, achFunding());
    expect(response.status).toBe(400);
    expect(response.body.errors[0]).toContain(
      `${platform.participantCode}/${platform.platformCode}/ach_clearing: insufficient USD`,
    );
    expect(await balances(platform)).toEqual(before);
    expect((await payments(platform)).count).toBe(0);
  });
});

describe('payment status events', () => {
  it('walks a debit submitted -> pending -> posted -> reversed; posted brings 101.50 into clearing, reversed sends it back; repeats are no-ops', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '1000', 'ach_clearing');
    const { transaction_id } = await achBuy(platform);
    const clearing = async () => (await balances(platform))[clearingKey(platform)];
    expect(await clearing()).toBe('900.00');

    expect(await bankEvent({ transaction_id, status: 'pending' })).toMatchObject({
      result: 'applied',
      payment: { status: 'pending' },
    });
    expect(await bankEvent({ transaction_id, status: 'pending' })).toMatchObject({
      result: 'noop',
      payment: { status: 'pending' },
    });
    expect(await clearing()).toBe('900.00');

    expect(await bankEvent({ transaction_id, status: 'posted' })).toMatchObject({
      result: 'applied',
      payment: { status: 'posted' },
    });
    expect(await clearing()).toBe('1001.50');
    expect(await bankEvent({ transaction_id, status: 'posted' })).toMatchObject({ result: 'noop' });
    expect(await clearing()).toBe('1001.50');

    expect(await bankEvent({ transaction_id, status: 'failed' })).toEqual({
      result: 'rejected',
      errors: ['status: a payment cannot move from posted to failed'],
    });
    expect(await bankEvent({ transaction_id, status: 'reversed' })).toMatchObject({
      result: 'applied',
      payment: { status: 'reversed' },
    });
    expect(await clearing()).toBe('900.00');
    expect(await bankEvent({ transaction_id, status: 'posted' })).toMatchObject({ result: 'rejected' });

    const [listed] = (await payments(platform, `?transaction_id=${transaction_id}`)).message;
    expect(listed.status).toBe('reversed');
    expect(Date.parse(listed.updated_at)).toBeGreaterThanOrEqual(Date.parse(listed.created_at));
  });

  it('books a reversal the clearing account cannot cover: the balance goes negative, shows in GET /accounts, is logged; other debits stay guarded', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '100', 'ach_clearing');
    const { transaction_id } = await achBuy(platform, { total: '98.50' });
    expect(await bankEvent({ transaction_id, status: 'pending' })).toMatchObject({ result: 'applied' });
    expect(await bankEvent({ transaction_id, status: 'posted' })).toMatchObject({ result: 'applied' });
    // The platform spends what the bank brought in: the clearing account is empty when the bank reverses.
    const spend = await platform.post(
      '/transfers',
      transferBody(platform, { from_account_label: 'ach_clearing', to_account_label: 'general', amount: '101.50' }),
    );
    expect(spend.status, spend.text).toBe(201);
    expect((await balances(platform))[clearingKey(platform)]).toBe('0.00');

    const warn = vi.spyOn(ctx.logger, 'warn').mockImplementation(() => undefined);
    try {
      expect(await bankEvent({ transaction_id, status: 'reversed' })).toMatchObject({
        result: 'applied',
        payment: { status: 'reversed' },
      });
      // Only the overdraft's warning: a loaded machine may log others (a retried throttle) meanwhile.
      const belowZero = warn.mock.calls.filter(([message]) => String(message).includes('below zero'));
      expect(belowZero.map(([message, attributes]) => ({ message, ...(attributes as object) }))).toEqual([
        expect.objectContaining({
          message: expect.stringContaining('below zero'),
          platform_code: platform.platformCode,
          transaction_id,
          balance: '-100',
        }),
      ]);
    } finally {
      warn.mockRestore();
    }
    expect((await balances(platform))[clearingKey(platform)]).toBe('-100.00');
    const [listed] = (await payments(platform, `?transaction_id=${transaction_id}`)).message;
    expect(listed.status).toBe('reversed');

    // Only bank events may overdraw it: a transfer out of the negative clearing account is refused.
    const more = await platform.post('/transfers', {
      from_participant_code: platform.participantCode,
      from_account_label: 'ach_clearing',
      to_participant_code: platform.participantCode,
      asset: 'USD',
      amount: '0.01',
    });
    expect(more.status, more.text).toBe(400);
    // And neither may an ACH buy it would have to front.
    expect((await executeAch(platform, { side: 'buy', total: '1' }, achFunding())).status).toBe(400);
    expect((await balances(platform))[clearingKey(platform)]).toBe('-100.00');
  });

  it('posts a credit out of the clearing account', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'LTC', '1');
    const response = await executeAch(platform, { side: 'sell', quantity: '1' }, achFunding());
    expect(response.status, response.text).toBe(200);
    const [payment] = (await payments(platform)).message;
    await bankEvent({ transaction_id: payment.transaction_id, status: 'pending' });
    expect(await bankEvent({ transaction_id: payment.transaction_id, status: 'posted' })).toMatchObject({
      result: 'applied',
    });
    // 100.00 of proceeds came in at execution, 98.50 left to the customer's bank: the fee stays.
    expect((await balances(platform))[clearingKey(platform)]).toBe('1.50');
  });

  it('fails from submitted and from pending; refuses skipping pending, leaving failed, unknown statuses and unknown payments', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '1000', 'ach_clearing');
    const first = await achBuy(platform);
    const second = await achBuy(platform);

    expect(await bankEvent({ transaction_id: first.transaction_id, status: 'posted' })).toEqual({
      result: 'rejected',
      errors: ['status: a payment cannot move from submitted to posted'],
    });
    expect(await bankEvent({ transaction_id: first.transaction_id, status: 'failed' })).toMatchObject({
      result: 'applied',
      payment: { status: 'failed' },
    });
    expect(await bankEvent({ transaction_id: first.transaction_id, status: 'pending' })).toMatchObject({
      result: 'rejected',
    });
    expect(await bankEvent({ transaction_id: first.transaction_id, status: 'failed' })).toMatchObject({
      result: 'noop',
    });

    expect(await bankEvent({ transaction_id: second.transaction_id, status: 'pending' })).toMatchObject({
      result: 'applied',
    });
    expect(await bankEvent({ transaction_id: second.transaction_id, status: 'submitted' })).toMatchObject({
      result: 'rejected',
    });
    expect(await bankEvent({ transaction_id: second.transaction_id, status: 'failed' })).toMatchObject({
      result: 'applied',
      payment: { status: 'failed' },
    });

    expect(await bankEvent({ transaction_id: second.transaction_id, status: 'settled' })).toMatchObject({
      result: 'rejected',
    });
    expect(await bankEvent({ transaction_id: randomUUID(), status: 'pending' })).toMatchObject({
      result: 'rejected',
      errors: [expect.stringContaining('payment not found')],
    });
    expect(await bankEvent({ status: 'pending' })).toEqual({
      result: 'rejected',
      errors: ['transaction_id: must be a non-empty string'],
    });
    expect(await bankEvent({ transaction_id: 'x'.repeat(3000), status: 'pending' })).toEqual({
      result: 'rejected',
      errors: ['transaction_id: at most 100 characters'],
    });
    // Wrong types and a message that is not an object: every field named, as for a missing one.
    for (const message of [{ transaction_id: 42, status: '' }, ['pending'], 'pending'])
      expect(await bankEvent(message)).toEqual({
        result: 'rejected',
        errors: ['transaction_id: must be a non-empty string', 'status: must be a non-empty string'],
      });
    // Failing moves no money: the platform fronted both purchases and bears them.
    expect((await balances(platform))[clearingKey(platform)]).toBe('800.00');
  });

  it('applies one of five concurrent deliveries of the same event, and books its money once', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '1000', 'ach_clearing');
    const { transaction_id } = await achBuy(platform);
    await bankEvent({ transaction_id, status: 'pending' });
    const replies = await Promise.all(Array.from({ length: 5 }, () => bankEvent({ transaction_id, status: 'posted' })));
    expect(replies.map((reply) => reply.result).sort()).toEqual(['applied', 'noop', 'noop', 'noop', 'noop']);
    expect((await balances(platform))[clearingKey(platform)]).toBe('1001.50');
  });

  it('is reachable from the ops CLI, which reports refusals as errors', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '1000', 'ach_clearing');
    const { transaction_id } = await achBuy(platform);
    const applied = await runAdmin(
      ['payment', 'event', '--transaction-id', transaction_id, '--status', 'pending', '--reason', 'test'],
      { ctx },
    );
    expect(applied).toMatchObject({ outcome: 'applied', payment: { transaction_id, status: 'pending' } });
    await expect(
      runAdmin(['payment', 'event', '--transaction-id', transaction_id, '--status', 'reversed', '--reason', 'test'], {
        ctx,
      }),
    ).rejects.toThrow('cannot move from pending to reversed');
  });
});

describe('GET /payments/status', () => {
  let platform: TestPlatform;
  let customer: string;
  const created: { transaction_id: string; trade_id: string; seconds: number }[] = [];

  beforeAll(async () => {
    platform = await newPlatform();
    customer = await newCustomer(platform.platformCode);
    await fund(platform.participantCode, 'USD', '1000', 'ach_clearing');
    // Three payments five seconds apart, so the second-granular date filters can tell them apart.
    try {
      for (const participant of [platform.participantCode, customer, customer]) {
        const payment = await achBuy(platform, { total: '10', participant_code: participant });
        const stored = await getPayment(ctx, payment.transaction_id);
        created.push({ ...payment, seconds: Math.floor(stored!.created_at_ms / 1000) });
        ctx.clock.advance(5_000);
      }
    } finally {
      ctx.clock.reset();
    }
    await bankEvent({ transaction_id: created[0]!.transaction_id, status: 'pending' });
  });

  const ids = (body: { message: { transaction_id: string }[] }) =>
    body.message.map((payment) => payment.transaction_id);

  it('lists every payment of the platform, newest first, with the default page size of 200', async () => {
    const body = await payments(platform);
    expect(ids(body)).toEqual([created[2]!.transaction_id, created[1]!.transaction_id, created[0]!.transaction_id]);
    expect(body).toMatchObject({ page: 1, page_size: 200, total_pages: 1, count: 3 });
  });

  it('filters by status, transaction_id, trade_id and participant', async () => {
    expect(ids(await payments(platform, '?status=pending'))).toEqual([created[0]!.transaction_id]);
    expect(ids(await payments(platform, '?status=submitted'))).toEqual([
      created[2]!.transaction_id,
      created[1]!.transaction_id,
    ]);
    expect(ids(await payments(platform, `?transaction_id=${created[1]!.transaction_id}`))).toEqual([
      created[1]!.transaction_id,
    ]);
    expect(ids(await payments(platform, `?trade_id=${created[2]!.trade_id}`))).toEqual([created[2]!.transaction_id]);
    expect(ids(await payments(platform, `?participant=${customer}`))).toEqual([
      created[2]!.transaction_id,
      created[1]!.transaction_id,
    ]);
    expect(ids(await payments(platform, `?participant=${platform.participantCode}&status=pending`))).toEqual([
      created[0]!.transaction_id,
    ]);
    expect((await payments(platform, `?trade_id=${randomUUID()}`)).count).toBe(0);
  });

  it('filters by start_date and end_date in seconds, inclusive, on created_at', async () => {
    const [first, second, third] = created as [(typeof created)[0], (typeof created)[0], (typeof created)[0]];
    expect(ids(await payments(platform, `?start_date=${second.seconds}&end_date=${second.seconds}`))).toEqual([
      second.transaction_id,
    ]);
    expect(ids(await payments(platform, `?start_date=${second.seconds}`))).toEqual([
      third.transaction_id,
      second.transaction_id,
    ]);
    expect(ids(await payments(platform, `?end_date=${first.seconds}`))).toEqual([first.transaction_id]);
    expect((await payments(platform, `?start_date=${third.seconds + 1}`)).count).toBe(0);
  });

  it('pages with page and size', async () => {
    const first = await payments(platform, '?size=2');
    expect(first).toMatchObject({ page: 1, page_size: 2, total_pages: 2, count: 3 });
    expect(ids(first)).toEqual([created[2]!.transaction_id, created[1]!.transaction_id]);
    const second = await payments(platform, '?size=2&page=2');
    expect(second).toMatchObject({ page: 2, page_size: 2, total_pages: 2, count: 3 });
    expect(ids(second)).toEqual([created[0]!.transaction_id]);
    expect((await payments(platform, '?size=2&page=3')).message).toEqual([]);
  });

  it.each([
    ['size=201', 'size:'],
    ['size=0', 'size:'],
    ['page=0', 'page:'],
    ['status=settled', 'status: must be one of submitted, pending, posted, failed, reversed'],
    ['start_date=yesterday', 'start_date:'],
    ['start_date=-5', 'start_date:'],
    ['start_date=200&end_date=100', 'end_date: must not be before start_date'],
  ])('refuses ?%s with 400', async (query, words) => {
    const response = await platform.get(`/payments/status?${query}`);
    expect(response.status).toBe(400);
    expect(response.body.errors.join(' ')).toContain(words);
  });

  it('refuses a participant code too long to be one with 400, not a 500 from the key lookup', async () => {
    const response = await platform.get(`/payments/status?participant=${'A'.repeat(2100)}`);
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual(['participant: must be at most 50 characters']);
  });

  it('accepts only participants the platform relates to; other platforms never see its payments', async () => {
    const other = await newPlatform();
    const stranger = await newCustomer(other.platformCode);
    const refused = await platform.get(`/payments/status?participant=${stranger}`);
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([
      `participant: no participant '${stranger}' that this platform has a relationship with`,
    ]);
    await grantRelationship(ctx, platform.platformCode, 'submits_platform_transfers_for', stranger);
    expect((await payments(platform, `?participant=${stranger}`)).count).toBe(0);

    expect((await payments(other)).count).toBe(0);
    expect((await payments(other, `?transaction_id=${created[0]!.transaction_id}`)).count).toBe(0);
  });
});
