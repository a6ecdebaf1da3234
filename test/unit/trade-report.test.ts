import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  TRADE_REPORT_LIMITS,
  priceMatchesAmounts,
  quoteAmountFor,
  validateTradeReport,
  type TradeReport,
  type TradeReportContext,
} from '../../lib/domain/trade-report.js';
import { findAsset, type Asset } from '../../lib/domain/assets.js';

const NOW_MS = Date.UTC(2026, 10, 21, 12, 0, 0);
const PLATFORM = 'PLAT01';
const ctx: TradeReportContext = { platformCode: PLATFORM, nowMs: NOW_MS };
const USD = findAsset('USD') as Asset;

type Body = Record<string, unknown> & { parties: Record<string, unknown>[] };

/** A valid method-A spot trade: 10 BTC at 10000.0008 USD. */
function methodA(overrides: Record<string, unknown> = {}): Body {
  return {
    client_trade_id: 'ct-0001',
    session_id: '20261121',
    trade_reporter: 'ops@platform.example',
    platform_code: PLATFORM,
    symbol: 'BTC/USD',
    product_type: 'spot',
    trade_type: 'regular',
    trade_price: '10000.0008',
    trade_quantity: '10',
    physical_delivery: true,
    transaction_timestamp: NOW_MS - 5_000,
    parties_anonymous: false,
    parties: [
      { side: 'buy', participant_code: 'BUYER1', asset: 'BTC', settling: true },
      { side: 'sell', participant_code: 'SELLR1', asset: 'USD', settling: true },
    ],
    ...overrides,
  } as Body;
}

/** A valid method-B trade: 2 BTC for 50001 USD at 25000.5. */
function methodB(overrides: Record<string, unknown> = {}): Body {
  const body = methodA({ trade_price: '25000.5', ...overrides });
  delete body.trade_quantity;
  body.parties[0]!.amount = '2';
  body.parties[1]!.amount = '50001';
  return body;
}

function ok(body: unknown, context = ctx): TradeReport {
  const result = validateTradeReport(body, context);
  if (!result.ok) throw new Error(`expected a valid trade, got: ${result.errors.join(' | ')}`);
  return result.value;
}

function errorsOf(body: unknown, context = ctx): string[] {
  const result = validateTradeReport(body, context);
  if (result.ok) throw new Error('expected validation errors');
  return result.errors;
}

function withParty(body: Body, index: number, changes: Record<string, unknown>): Body {
  body.parties[index] = { ...body.parties[index], ...changes };
  return body;
}

describe('validateTradeReport: a valid method-A trade', () => {
  it('computes both amounts, echoes the fields and adds the derived ones', () => {
    const trade = ok(methodA({ comment: 'block via chat', bank_fee: '1.50', reporting_party: 'REPRT1' }));
    expect(trade).toMatchObject({
      client_trade_id: 'ct-0001',
      session_id: '20261121',
      platform_code: PLATFORM,
      symbol: 'BTC/USD',
      trade_price: '10000.0008',
      trade_quantity: '10.00000000',
      amount_method: 'price_and_quantity',
      physical_delivery: true,
      contract_size: 1,
      underlying: 'BTC',
      quoted_currency: 'USD',
      bank_fee: '1.50',
      comment: 'block via chat',
      reporting_party: 'REPRT1',
      settlement_timestamp: null,
      expiry_timestamp: null,
      settlement_price_index_id: null,
    });
    // 10 × 10000.0008 = 100000.008, rounded half-even at the cent.
    expect(trade.parties.map((p) => [p.side, p.asset, p.amount])).toEqual([
      ['buy', 'BTC', '10.00000000'],
      ['sell', 'USD', '100000.01'],
    ]);
    expect(trade.parties[0]).toMatchObject({ account_label: 'general', settling: true, liquidity_indicator: null });
  });

  it('strips unknown fields and ignores fields the service owns', () => {
    const body = methodA({
      trade_id: 'client-chosen',
      trade_state: 'terminated',
      accepted_timestamp: 1,
      settled_timestamp: 2,
      last_update: 3,
      origin: 'sdk',
      surprise: { nested: true },
    });
    withParty(body, 0, { settlement_state: 'settled', obligations_outstanding_timestamp: 5, trader: 'ABCDEF' });
    const trade = ok(body) as unknown as Record<string, unknown>;
    for (const key of [
      'trade_id',
      'trade_state',
      'accepted_timestamp',
      'settled_timestamp',
      'last_update',
      'origin',
      'surprise',
    ]) {
      expect(trade).not.toHaveProperty(key);
    }
    const party = (trade.parties as Record<string, unknown>[])[0];
    expect(party).not.toHaveProperty('settlement_state');
    expect(party).not.toHaveProperty('trader');
  });

  it('keeps reporting-only party fields', () => {
    const body = withParty(methodA(), 1, {
      liquidity_indicator: 'added',
      client_order_id: 'co-1',
      order_id: 'o-1',
      execution_id: 'e-1',
      account_label: 'desk-a',
    });
    expect(ok(body).parties[1]).toMatchObject({
      liquidity_indicator: 'added',
      client_order_id: 'co-1',
      order_id: 'o-1',
      execution_id: 'e-1',
      account_label: 'desk-a',
    });
  });

  it('treats null optional fields as absent', () => {
    const trade = ok(methodA({ comment: null, bank_fee: null, settlement_timestamp: null, reporting_party: null }));
    expect(trade.comment).toBeNull();
    expect(trade.bank_fee).toBeNull();
  });

  it('accepts parties in either order', () => {
    const body = methodA();
    body.parties.reverse();
    const trade = ok(body);
    expect(trade.parties.map((p) => [p.side, p.amount])).toEqual([
      ['sell', '100000.01'],
      ['buy', '10.00000000'],
    ]);
  });
});

describe('reports every issue at once', () => {
  it('lists all missing required fields of an empty object', () => {
    const errors = errorsOf({});
    expect(errors.some((e) => e.startsWith('session_id: '))).toBe(false);
    for (const field of [
      'client_trade_id',
      'trade_reporter',
      'platform_code',
      'symbol',
      'product_type',
      'trade_type',
      'trade_price',
      'physical_delivery',
      'transaction_timestamp',
      'parties_anonymous',
      'parties',
    ]) {
      expect(errors.some((e) => e.startsWith(`${field}: `))).toBe(true);
    }
  });

  it('collects top-level, party and amount-method issues together, in field order', () => {
    const body = methodA({ client_trade_id: 'x'.repeat(51), physical_delivery: false, bank_fee: '0.001' });
    withParty(body, 1, { participant_code: 'bad', amount: '5' });
    const errors = errorsOf(body);
    expect(errors).toEqual([
      'client_trade_id: at most 50 characters',
      'physical_delivery: only true is supported (financial settlement is not)',
      'bank_fee: at most 2 decimal places',
      'parties[1].participant_code: must be a 6-character participant code',
      'trade_quantity: must be omitted when the parties carry amounts',
    ]);
  });

  it('rejects a body that is not an object', () => {
    expect(errorsOf([])).toEqual(['body: must be a JSON object']);
    expect(errorsOf('trade')).toEqual(['body: must be a JSON object']);
    expect(errorsOf(null)).toEqual(['body: must be a JSON object']);
  });
});

describe('lists issues in one order', () => {
  it("lists a rule's issue with its field, before later fields' own problems", () => {
    expect(errorsOf(methodA({ platform_code: 'OTHER1', bank_fee: '1.234' }))).toEqual([
      `platform_code: must be your platform's code ${PLATFORM}`,
      'bank_fee: at most 2 decimal places',
    ]);
    const forward = methodA({ product_type: 'forward', trade_type: 'odd', expiry_timestamp: NOW_MS + 86_400_000 });
    expect(errorsOf(forward)).toEqual([
      'settlement_price_index_id: required for forwards',
      'trade_type: must be one of regular, block',
    ]);
    const parties = withParty(withParty(methodA(), 0, { asset: 'USD' }), 1, { participant_code: 'bad' });
    expect(errorsOf(parties)).toEqual([
      'parties[0].asset: must be BTC (the buyer receives the base asset)',
      'parties[1].participant_code: must be a 6-character participant code',
    ]);
  });

  it('lists settlement after expiry with expiry_timestamp, after its own problem', () => {
    expect(errorsOf(methodA({ expiry_timestamp: NOW_MS - 1000, settlement_timestamp: NOW_MS - 500 }))).toEqual([
      'expiry_timestamp: has already passed',
      'settlement_timestamp: must not be after expiry_timestamp',
    ]);
  });

  it('lists the rules about both parties and the amounts after every field', () => {
    const body = withParty(methodA({ parties_anonymous: true, trade_quantity: '0.000000001' }), 1, {
      participant_code: PLATFORM,
      side: 'buy',
      asset: 'BTC',
      settling: false,
    });
    withParty(body, 0, { settling: false, order_id: 7 });
    expect(errorsOf(body)).toEqual([
      'parties[0].order_id: must be a string',
      'parties: exactly one buy and one sell party are required',
      'parties_anonymous: must be false when the platform is itself a party',
      'parties: at least one party must be settling',
    ]);
  });

  it('still checks the rules across fields when a timestamp is a fraction', () => {
    expect(errorsOf(methodA({ settlement_timestamp: 1.5, platform_code: 'OTHER1' }))).toEqual([
      `platform_code: must be your platform's code ${PLATFORM}`,
      'settlement_timestamp: must be a UNIX timestamp in milliseconds (an integer)',
    ]);
    expect(errorsOf(methodA({ transaction_timestamp: 0.5, trade_quantity: '0.000000001' }))).toEqual([
      'transaction_timestamp: must be a UNIX timestamp in milliseconds (an integer)',
      'trade_quantity: at most 8 decimal places for BTC',
    ]);
  });
});

describe('top-level fields', () => {
  it('client_trade_id: required, a string of at most 50', () => {
    const missing = methodA();
    delete missing.client_trade_id;
    expect(errorsOf(missing)).toContain('client_trade_id: required');
    expect(errorsOf(methodA({ client_trade_id: 42 }))).toContain('client_trade_id: must be a string');
    expect(errorsOf(methodA({ client_trade_id: '' }))).toContain('client_trade_id: must not be empty');
    expect(ok(methodA({ client_trade_id: 'x'.repeat(50) })).client_trade_id).toHaveLength(50);
  });

  it('session_id: an optional string, empty allowed, stored as "" when absent', () => {
    const missing = methodA();
    delete missing.session_id;
    expect(ok(missing).session_id).toBe('');
    expect(ok(methodA({ session_id: null })).session_id).toBe('');
    expect(ok(methodA({ session_id: '20261121' })).session_id).toBe('20261121');
    expect(errorsOf(methodA({ session_id: 7 }))).toContain('session_id: must be a string');
    expect(ok(methodA({ session_id: '' })).session_id).toBe('');
  });

  it('trade_reporter: a required string', () => {
    expect(errorsOf(methodA({ trade_reporter: ['a'] }))).toContain('trade_reporter: must be a string');
    expect(ok(methodA({ trade_reporter: 'desk' })).trade_reporter).toBe('desk');
  });

  it('reporting_party and settlement_schedule are optional', () => {
    expect(errorsOf(methodA({ reporting_party: '12345' }))).toContain(
      'reporting_party: must be a 6-character participant code',
    );
    expect(errorsOf(methodA({ settlement_schedule: 5 }))).toContain('settlement_schedule: must be a string');
    const trade = ok(methodA({ reporting_party: '123456', settlement_schedule: 'SCHED1' }));
    expect([trade.reporting_party, trade.settlement_schedule]).toEqual(['123456', 'SCHED1']);
    expect(ok(methodA()).settlement_schedule).toBeNull();
  });

  it("platform_code: must be the caller's own platform", () => {
    expect(errorsOf(methodA({ platform_code: 'OTHER1' }))).toEqual([
      `platform_code: must be your platform's code ${PLATFORM}`,
    ]);
    const missing = methodA();
    delete missing.platform_code;
    expect(errorsOf(missing)).toContain('platform_code: required');
  });

  it('symbol: BASE/QUOTE of two different known assets', () => {
    expect(errorsOf(methodA({ symbol: 'BTCUSD' }))).toContain('symbol: must be BASE/QUOTE, e.g. BTC/USD');
    expect(errorsOf(methodA({ symbol: 'BTC/USD/EUR' }))).toContain('symbol: must be BASE/QUOTE, e.g. BTC/USD');
    expect(errorsOf(methodA({ symbol: '/USD' }))).toContain('symbol: must be BASE/QUOTE, e.g. BTC/USD');
    expect(errorsOf(methodA({ symbol: 'BTC/XYZ' }))).toContain("symbol: unknown asset 'XYZ'");
    expect(errorsOf(methodA({ symbol: 'FOO/BAR' }))).toEqual(
      expect.arrayContaining(["symbol: unknown asset 'FOO'", "symbol: unknown asset 'BAR'"]),
    );
    expect(errorsOf(methodA({ symbol: 'BTC/BTC' }))).toContain('symbol: base and quote must be different assets');
  });

  it('product_type: spot or forward; forwards need settlement_price_index_id', () => {
    expect(errorsOf(methodA({ product_type: 'swap' }))).toContain('product_type: must be one of spot, forward');
    const expiry = NOW_MS + 86_400_000;
    expect(errorsOf(methodA({ product_type: 'forward', expiry_timestamp: expiry }))).toEqual([
      'settlement_price_index_id: required for forwards',
    ]);
    expect(errorsOf(methodA({ product_type: 'forward', settlement_price_index_id: 'x'.repeat(21) }))).toContain(
      'settlement_price_index_id: at most 20 characters',
    );
    const forward = ok(
      methodA({ product_type: 'forward', settlement_price_index_id: 'BRR', expiry_timestamp: expiry }),
    );
    expect(forward).toMatchObject({
      product_type: 'forward',
      settlement_price_index_id: 'BRR',
      expiry_timestamp: expiry,
    });
    expect(ok(methodA({ product_type: 'spot' })).settlement_price_index_id).toBeNull();
  });

  it('expiry_timestamp and settlement_timestamp: optional ms integers, expiry in the future and not before settlement', () => {
    expect(errorsOf(methodA({ expiry_timestamp: NOW_MS }))).toContain('expiry_timestamp: has already passed');
    expect(errorsOf(methodA({ expiry_timestamp: 1.5 }))).toContain(
      'expiry_timestamp: must be a UNIX timestamp in milliseconds (an integer)',
    );
    expect(errorsOf(methodA({ settlement_timestamp: Math.floor(NOW_MS / 1000) }))).toContain(
      'settlement_timestamp: must be a UNIX timestamp in milliseconds (out of range)',
    );
    expect(errorsOf(methodA({ settlement_timestamp: '1763726400000' }))).toContain(
      'settlement_timestamp: must be a UNIX timestamp in milliseconds (an integer)',
    );
    expect(errorsOf(methodA({ expiry_timestamp: NOW_MS + 1000, settlement_timestamp: NOW_MS + 2000 }))).toContain(
      'settlement_timestamp: must not be after expiry_timestamp',
    );
    const trade = ok(methodA({ expiry_timestamp: NOW_MS + 2000, settlement_timestamp: NOW_MS + 1000 }));
    expect([trade.settlement_timestamp, trade.expiry_timestamp]).toEqual([NOW_MS + 1000, NOW_MS + 2000]);
  });

  it('trade_type: regular or block', () => {
    expect(errorsOf(methodA({ trade_type: 'odd' }))).toContain('trade_type: must be one of regular, block');
    expect(ok(methodA({ trade_type: 'block' })).trade_type).toBe('block');
  });

  it('trade_price: a positive decimal string of any precision', () => {
    const shape = 'trade_price: must be a decimal string such as "12.34" (no sign, no exponent)';
    for (const bad of ['-1', '1e5', 'abc', '1.', '', ' 1', 100]) {
      expect(errorsOf(methodA({ trade_price: bad }))).toContain(shape);
    }
    expect(errorsOf(methodA({ trade_price: '0' }))).toContain('trade_price: must be greater than zero');
    expect(errorsOf(methodA({ trade_price: '0.000' }))).toContain('trade_price: must be greater than zero');
    expect(errorsOf(methodA({ trade_price: '1'.repeat(101) }))).toContain('trade_price: at most 100 characters');
    const precise = ok(methodA({ trade_price: '.123456789012345678901234567890', trade_quantity: '1000000' }));
    expect(precise.trade_price).toBe('.123456789012345678901234567890');
    expect(precise.parties[1]?.amount).toBe('123456.79');
  });

  it('physical_delivery: only boolean true', () => {
    expect(errorsOf(methodA({ physical_delivery: false }))).toEqual([
      'physical_delivery: only true is supported (financial settlement is not)',
    ]);
    expect(errorsOf(methodA({ physical_delivery: 'true' }))).toEqual(['physical_delivery: must be true']);
    const missing = methodA();
    delete missing.physical_delivery;
    expect(errorsOf(missing)).toEqual(['physical_delivery: must be true']);
  });

  it('transaction_timestamp: required ms integer, not in the future', () => {
    const missing = methodA();
    delete missing.transaction_timestamp;
    expect(errorsOf(missing)).toContain('transaction_timestamp: required');
    expect(errorsOf(methodA({ transaction_timestamp: NOW_MS + TRADE_REPORT_LIMITS.clockSkewMs + 1 }))).toContain(
      'transaction_timestamp: must not be in the future',
    );
    expect(ok(methodA({ transaction_timestamp: NOW_MS + 1000 })).transaction_timestamp).toBe(NOW_MS + 1000);
  });

  it('comment: optional, at most 500 characters', () => {
    expect(errorsOf(methodA({ comment: 'c'.repeat(501) }))).toContain('comment: at most 500 characters');
    expect(ok(methodA({ comment: 'c'.repeat(500) })).comment).toHaveLength(500);
  });

  it('parties_anonymous: a required boolean', () => {
    expect(errorsOf(methodA({ parties_anonymous: 'false' }))).toContain('parties_anonymous: must be true or false');
    const missing = methodA();
    delete missing.parties_anonymous;
    expect(errorsOf(missing)).toContain('parties_anonymous: required');
  });

  it('bank_fee: optional decimal string with at most 2 decimals', () => {
    expect(errorsOf(methodA({ bank_fee: '1.234' }))).toEqual(['bank_fee: at most 2 decimal places']);
    expect(errorsOf(methodA({ bank_fee: 1.5 }))).toContain(
      'bank_fee: must be a decimal string such as "12.34" (no sign, no exponent)',
    );
    expect(ok(methodA({ bank_fee: '2.5' })).bank_fee).toBe('2.5');
    expect(ok(methodA({ bank_fee: '0' })).bank_fee).toBe('0');
  });
});

describe('parties', () => {
  it('exactly two', () => {
    const three = methodA();
    three.parties.push({ side: 'buy', participant_code: 'THIRD1', asset: 'BTC', settling: true });
    expect(errorsOf(three)).toEqual(['parties: exactly 2 parties are supported, got 3']);
    const one = methodA();
    one.parties.pop();
    expect(errorsOf(one)).toContain('parties: exactly 2 parties are supported, got 1');
    expect(errorsOf(methodA({ parties: {} }))).toContain('parties: must be an array');
    expect(errorsOf(methodA({ parties: undefined }))).toContain('parties: required');
  });

  it('each an object', () => {
    const body = methodA();
    body.parties[1] = 'seller' as never;
    expect(errorsOf(body)).toContain('parties[1]: must be an object');
  });

  it('one buy and one sell', () => {
    const body = withParty(methodA(), 1, { side: 'buy', asset: 'BTC' });
    expect(errorsOf(body)).toEqual(['parties: exactly one buy and one sell party are required']);
    expect(errorsOf(withParty(methodA(), 0, { side: 'bid' }))).toContain('parties[0].side: must be one of buy, sell');
  });

  it('participant_code: a 6-character code', () => {
    expect(errorsOf(withParty(methodA(), 0, { participant_code: 'ABC' }))).toEqual([
      'parties[0].participant_code: must be a 6-character participant code',
    ]);
    expect(errorsOf(withParty(methodA(), 0, { participant_code: undefined }))).toContain(
      'parties[0].participant_code: required',
    );
  });

  it('the buyer receives the base, the seller the quote', () => {
    expect(errorsOf(withParty(methodA(), 0, { asset: 'USD' }))).toEqual([
      'parties[0].asset: must be BTC (the buyer receives the base asset)',
    ]);
    expect(errorsOf(withParty(methodA(), 1, { asset: 'BTC' }))).toEqual([
      'parties[1].asset: must be USD (the seller receives the quote asset)',
    ]);
    expect(errorsOf(withParty(methodA(), 1, { asset: undefined }))).toContain('parties[1].asset: required');
  });

  it('settling: boolean or "true"/"false", absent means settling, at least one side settles', () => {
    const strings = withParty(withParty(methodA(), 0, { settling: 'true' }), 1, { settling: 'false' });
    expect(ok(strings).parties.map((p) => p.settling)).toEqual([true, false]);
    const absent = withParty(methodA(), 0, { settling: undefined });
    expect(ok(absent).parties[0]?.settling).toBe(true);
    expect(errorsOf(withParty(methodA(), 0, { settling: 'yes' }))).toEqual([
      'parties[0].settling: must be true or false',
    ]);
    const neither = withParty(withParty(methodA(), 0, { settling: false }), 1, { settling: 'false' });
    expect(errorsOf(neither)).toEqual(['parties: at least one party must be settling']);
  });

  it('account_label: optional, defaults to general, held to the rule of account labels', () => {
    expect(ok(methodA()).parties.map((p) => p.account_label)).toEqual(['general', 'general']);
    expect(ok(withParty(methodA(), 0, { account_label: 'l'.repeat(50) })).parties[0].account_label).toBe(
      'l'.repeat(50),
    );
    // The rule of account groups: letters, digits, _ and -, at most 50 (nothing that could be a key separator).
    for (const label of ['l'.repeat(51), 'general#x', 'general ', 'a/b', ''])
      expect(errorsOf(withParty(methodA(), 0, { account_label: label })), label).toContain(
        'parties[0].account_label: must be 1 to 50 letters, digits, _ or - (an account label)',
      );
  });

  it('reporting-only fields are checked when present', () => {
    expect(errorsOf(withParty(methodA(), 0, { liquidity_indicator: 'taken' }))).toContain(
      'parties[0].liquidity_indicator: must be one of added, removed',
    );
    expect(errorsOf(withParty(methodA(), 0, { client_order_id: 'c'.repeat(37) }))).toContain(
      'parties[0].client_order_id: at most 36 characters',
    );
    expect(errorsOf(withParty(methodA(), 0, { order_id: 12 }))).toContain('parties[0].order_id: must be a string');
    expect(errorsOf(withParty(methodA(), 0, { execution_id: 'e'.repeat(101) }))).toContain(
      'parties[0].execution_id: at most 100 characters',
    );
  });
});

describe('the anonymous rules', () => {
  const anonymousSeller = () =>
    withParty(methodA({ parties_anonymous: true }), 1, { participant_code: 'Anonymous', settling: false });

  it('Anonymous is a legal code only when parties_anonymous is true', () => {
    expect(ok(anonymousSeller()).parties[1]).toMatchObject({ participant_code: 'Anonymous', settling: false });
    const notAnonymous = withParty(methodA(), 1, { participant_code: 'Anonymous', settling: false });
    expect(errorsOf(notAnonymous)).toEqual([
      "parties[1].participant_code: 'Anonymous' is only allowed when parties_anonymous is true",
    ]);
  });

  it('an Anonymous party cannot settle, and is not settling when settling is absent', () => {
    expect(errorsOf(withParty(anonymousSeller(), 1, { settling: true }))).toEqual([
      'parties[1].settling: an Anonymous party cannot be settling',
    ]);
    expect(ok(withParty(anonymousSeller(), 1, { settling: undefined })).parties[1]?.settling).toBe(false);
  });

  it('parties_anonymous must be false when the platform is itself a party', () => {
    const platformSells = withParty(methodA({ parties_anonymous: true }), 1, { participant_code: PLATFORM });
    expect(errorsOf(platformSells)).toEqual(['parties_anonymous: must be false when the platform is itself a party']);
    expect(
      ok(withParty(methodA({ parties_anonymous: false }), 1, { participant_code: PLATFORM })).parties_anonymous,
    ).toBe(false);
    expect(ok(methodA({ parties_anonymous: true })).parties_anonymous).toBe(true);
  });

  it("also recognises the platform's own participant code", () => {
    const body = withParty(methodA({ parties_anonymous: true }), 0, { participant_code: 'PLATPC' });
    expect(errorsOf(body, { ...ctx, platformParticipantCode: 'PLATPC' })).toEqual([
      'parties_anonymous: must be false when the platform is itself a party',
    ]);
  });
});

describe('amount method A: price and quantity', () => {
  it('rejects a quantity finer than the base asset allows instead of rounding it', () => {
    expect(errorsOf(methodA({ trade_quantity: '0.000000001' }))).toEqual([
      'trade_quantity: at most 8 decimal places for BTC',
    ]);
    expect(ok(methodA({ trade_quantity: '0.00000001', trade_price: '1000000' })).trade_quantity).toBe('0.00000001');
  });

  it('reports a trade_quantity that is not a decimal string (a JSON number, say) instead of throwing', () => {
    const shape = 'trade_quantity: must be a decimal string such as "12.34" (no sign, no exponent)';
    for (const bad of [0.5, 'abc', {}, true]) {
      expect(errorsOf(methodA({ trade_quantity: bad }))).toEqual([shape]);
    }
  });

  it('rejects a zero quantity and one whose quote amount rounds to zero', () => {
    expect(errorsOf(methodA({ trade_quantity: '0' }))).toEqual(['trade_quantity: must be greater than zero']);
    expect(errorsOf(methodA({ trade_quantity: '1', trade_price: '0.004' }))).toEqual([
      'trade_quantity: trade_price × trade_quantity rounds to zero USD',
    ]);
  });

  it('bounds the computed quote amount like a client amount', () => {
    expect(errorsOf(methodA({ trade_quantity: '1000', trade_price: '1000000000000' }))).toEqual([
      'trade_quantity: trade_price × trade_quantity must be less than 1000000000000000 USD',
    ]);
    expect(ok(methodA({ trade_quantity: '1000', trade_price: '999999999999.99999' })).parties[1]!.amount).toBe(
      '999999999999999.99',
    );
  });

  it.each([
    // price, quantity, seller's USD amount: ties go to the even cent, everything else to the nearest.
    ['0.025', '1', '0.02'],
    ['0.035', '1', '0.04'],
    ['0.015', '1', '0.02'],
    ['0.045', '1', '0.04'],
    ['2.5', '0.01', '0.02'],
    ['3.5', '0.01', '0.04'],
    ['1.0251', '1', '1.03'],
    ['1.0249', '1', '1.02'],
    ['10000.0008', '10', '100000.01'],
    ['10000.0005', '10', '100000.00'],
    ['10000.0015', '10', '100000.02'],
    ['0.125', '0.1', '0.01'],
  ])('banker’s rounding at the cent: %s × %s = %s', (price, quantity, expected) => {
    const trade = ok(methodA({ trade_price: price, trade_quantity: quantity }));
    expect(trade.parties[1]?.amount).toBe(expected);
    expect(quoteAmountFor(price, quantity, USD).toFixed(2)).toBe(expected);
  });

  it('rounds to the quote precision of a crypto quote', () => {
    // ETH/BTC: 1 × 0.000000125 = 0.000000125, half-even at 8 decimals -> 0.00000012.
    const trade = ok(
      withParty(
        withParty(methodA({ symbol: 'ETH/BTC', trade_price: '0.000000125', trade_quantity: '1' }), 0, { asset: 'ETH' }),
        1,
        {
          asset: 'BTC',
        },
      ),
    );
    expect(trade.parties.map((p) => p.amount)).toEqual(['1.000000000000000000', '0.00000012']);
  });

  it('is exact for long prices and quantities', () => {
    // 60 digits of working precision would cut this price to 0.005 and round the tie down to 0.00.
    const price = `0.005${'0'.repeat(70)}1`;
    expect(ok(methodA({ trade_price: price, trade_quantity: '1' })).parties[1]?.amount).toBe('0.01');
    const quantity = '123456789012.123456789012345678';
    const eth = withParty(
      withParty(methodA({ symbol: 'ETH/USD', trade_price: '3', trade_quantity: quantity }), 0, { asset: 'ETH' }),
      1,
      {
        asset: 'USD',
      },
    );
    expect(ok(eth).parties.map((p) => p.amount)).toEqual([quantity, '370370367036.37']);
  });
});

describe('amount method B: amounts per party', () => {
  it('accepts amounts whose ratio is the price', () => {
    const trade = ok(methodB());
    expect(trade.amount_method).toBe('amounts_per_party');
    expect(trade.trade_quantity).toBe('2.00000000');
    expect(trade.parties.map((p) => p.amount)).toEqual(['2.00000000', '50001.00']);
  });

  it('rejects a price that is not seller ÷ buyer', () => {
    expect(errorsOf(methodB({ trade_price: '25000' }))).toEqual([
      "trade_price: must equal the seller's amount ÷ the buyer's amount to 20 significant figures (25000.5)",
    ]);
  });

  it('compares to 20 significant figures: exact passes, off in the 20th figure fails', () => {
    const body = (price: string) => {
      const b = methodB({ trade_price: price });
      b.parties[0]!.amount = '3';
      b.parties[1]!.amount = '1';
      return b;
    };
    expect(ok(body('0.33333333333333333333')).trade_price).toBe('0.33333333333333333333');
    expect(ok(body('0.333333333333333333333333')).trade_price).toBe('0.333333333333333333333333');
    expect(errorsOf(body('0.33333333333333333334'))).toHaveLength(1);
    expect(errorsOf(body('0.3333333333333333333'))).toHaveLength(1);
  });

  it('breaks a tie at the 21st figure half-to-even on both sides', () => {
    // USDC/ETH: 20 USDC for 20.000000000000000001 ETH is 1.00000000000000000005, a tie at the 21st figure.
    const body = (price: string, ethAmount: string) => {
      const b = methodB({ symbol: 'USDC/ETH', trade_price: price });
      b.parties[0] = { ...b.parties[0], asset: 'USDC', amount: '20' };
      b.parties[1] = { ...b.parties[1], asset: 'ETH', amount: ethAmount };
      return b;
    };
    // ...0 is even: the tie rounds down to 1.
    expect(ok(body('1', '20.000000000000000001')).parties[1]?.amount).toBe('20.000000000000000001');
    expect(errorsOf(body('1.0000000000000000001', '20.000000000000000001'))).toHaveLength(1);
    // 1.00000000000000000015: ...1 is odd, the tie rounds up to ...2.
    expect(ok(body('1.0000000000000000002', '20.000000000000000003')).trade_price).toBe('1.0000000000000000002');
    expect(errorsOf(body('1.0000000000000000001', '20.000000000000000003'))).toHaveLength(1);
    // The price itself is rounded the same way before comparing.
    expect(ok(body('1.00000000000000000005', '20.000000000000000001')).trade_price).toBe('1.00000000000000000005');
  });

  it('priceMatchesAmounts reports the expected price', () => {
    expect(priceMatchesAmounts('2', '3', '7')).toEqual({ matches: false, expected: '2.3333333333333333333' });
    expect(priceMatchesAmounts('2.3333333333333333333', '3', '7').matches).toBe(true);
  });

  it('amounts must fit each asset and be positive', () => {
    expect(errorsOf(withParty(methodB(), 1, { amount: '50001.001' }))).toEqual([
      'parties[1].amount: at most 2 decimal places for USD',
    ]);
    expect(errorsOf(withParty(methodB(), 0, { amount: '0' }))).toEqual([
      'parties[0].amount: must be greater than zero',
    ]);
    expect(errorsOf(withParty(methodB(), 0, { amount: '-2' }))).toEqual([
      'parties[0].amount: must be a decimal string such as "12.34" (no sign, no exponent)',
    ]);
  });

  it('needs an amount on every party', () => {
    expect(errorsOf(withParty(methodB(), 1, { amount: undefined }))).toEqual([
      'parties[1].amount: required when trade_quantity is omitted',
    ]);
  });

  it('trade_quantity together with amounts, or neither, is an error', () => {
    expect(errorsOf({ ...methodB(), trade_quantity: '2' })).toEqual([
      'trade_quantity: must be omitted when the parties carry amounts',
    ]);
    expect(errorsOf(withParty(methodA(), 0, { amount: '10' }))).toEqual([
      'trade_quantity: must be omitted when the parties carry amounts',
    ]);
    const neither = methodA();
    delete neither.trade_quantity;
    expect(errorsOf(neither)).toEqual(['trade_quantity: required unless every party carries an amount']);
  });
});

describe('any client body', () => {
  // Whatever a client sends is a valid trade or a list of errors (a 400), never an exception (a 500).
  const value = fc.oneof(
    fc.constantFrom(
      undefined,
      null,
      true,
      false,
      0,
      0.5,
      -1,
      '',
      '0',
      '.5',
      '1e5',
      '2',
      '200',
      'Anonymous',
      'buy',
      'sell',
      'BTC',
      'USD',
      'BTC/BTC',
      'ETH/USD',
      'forward',
      PLATFORM,
    ),
    fc.integer(),
    fc.string(),
    fc.array(fc.anything(), { maxLength: 3 }),
    fc.object(),
  );
  const topFields = [
    'client_trade_id',
    'symbol',
    'product_type',
    'trade_price',
    'trade_quantity',
    'physical_delivery',
    'transaction_timestamp',
    'parties_anonymous',
    'settlement_timestamp',
    'expiry_timestamp',
    'bank_fee',
    'reporting_party',
    'parties',
  ];
  const partyFields = ['side', 'participant_code', 'asset', 'amount', 'settling', 'account_label'];

  it('validates to a trade or to errors, never throws', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.array(fc.tuple(fc.constantFrom(...topFields), value), { maxLength: 4 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), fc.constantFrom(...partyFields), value), { maxLength: 4 }),
        (amountsPerParty, topChanges, partyChanges) => {
          const body: Record<string, any> = amountsPerParty ? methodB() : methodA();
          for (const [field, v] of topChanges) body[field] = v;
          for (const [index, field, v] of partyChanges) {
            if (Array.isArray(body.parties) && body.parties[index] && typeof body.parties[index] === 'object')
              body.parties[index][field] = v;
          }
          const result = validateTradeReport(body, ctx);
          expect(result.ok ? result.value.parties : result.errors.length).toBeTruthy();
        },
      ),
      { numRuns: 3000 },
    );
  });
});
