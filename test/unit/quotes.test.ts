import { describe, expect, it } from 'vitest';
import { findAsset, type Asset } from '../../lib/domain/assets.js';
import { ValidationError } from '../../lib/domain/errors.js';
import { Money, roundToAsset } from '../../lib/domain/money.js';
import {
  computeConvertQuote,
  computeQuote,
  networkFeeNotionalOf,
  type QuoteSide,
  priceWithSpread,
  validateQuantityXorTotal,
} from '../../lib/domain/quotes.js';

function asset(symbol: string): Asset {
  const found = findAsset(symbol);
  if (!found) throw new Error(`test asset ${symbol} missing from the registry`);
  return found;
}

const USD = asset('USD');
const BTC = asset('BTC');
const ETH = asset('ETH');
const m = (text: string) => new Money(text);

/** A BTC/USD quote unless the test says otherwise. */
function quote(input: { side?: QuoteSide; underlying?: Asset; price: string; quantity?: string; total?: string }) {
  return computeQuote({
    side: 'buy',
    underlying: BTC,
    quoted: USD,
    ...input,
    price: m(input.price),
    quantity: input.quantity === undefined ? undefined : m(input.quantity),
    total: input.total === undefined ? undefined : m(input.total),
  });
}

function validationErrors(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof ValidationError) return error.errors;
    throw error;
  }
  throw new Error('expected a ValidationError');
}

describe('half-even rounding to the quoted precision', () => {
  it.each([
    ['0.125', '0.12'],
    ['0.135', '0.14'],
    ['0.145', '0.14'],
    ['0.1251', '0.13'],
    ['100000.008', '100000.01'],
  ])('%s rounds to %s', (raw, rounded) => {
    expect(roundToAsset(m(raw), USD).toFixed(2)).toBe(rounded);
  });

  it('rounds a computed total at the cent, half to even', () => {
    // 0.25 × 0.5 = 0.125 → 0.12; 0.27 × 0.5 = 0.135 → 0.14
    expect(quote({ price: '0.25', quantity: '0.5' }).total.toFixed(2)).toBe('0.12');
    expect(quote({ price: '0.27', quantity: '0.5' }).total.toFixed(2)).toBe('0.14');
  });
});

describe('priceWithSpread', () => {
  it('makes a buyer pay above the reference', () => {
    expect(priceWithSpread(m('30000'), 'buy', m('25')).toFixed()).toBe('30075');
  });

  it('makes a seller receive below the reference', () => {
    expect(priceWithSpread(m('30000'), 'sell', m('25')).toFixed()).toBe('29925');
  });

  it('keeps the exact price instead of rounding it', () => {
    expect(priceWithSpread(m('1.23'), 'buy', m('1')).toFixed()).toBe('1.230123');
    expect(priceWithSpread(m('1.23'), 'sell', m('0.5')).toFixed()).toBe('1.2299385');
  });

  it('is the reference itself at zero spread', () => {
    expect(priceWithSpread(m('30000'), 'buy', m('0')).eq(30000)).toBe(true);
    expect(priceWithSpread(m('30000'), 'sell', m('0')).eq(30000)).toBe(true);
  });

  it('rejects a negative spread or one that would zero a sell price', () => {
    expect(validationErrors(() => priceWithSpread(m('30000'), 'buy', m('-1')))[0]).toMatch(/^spread: /);
    expect(validationErrors(() => priceWithSpread(m('30000'), 'sell', m('10000')))[0]).toMatch(/^spread: /);
  });

  it('refuses a non-positive reference price as an internal error', () => {
    expect(() => priceWithSpread(m('0'), 'buy', m('10'))).toThrow(/reference price/);
  });
});

describe('validateQuantityXorTotal', () => {
  it('accepts exactly one of the two', () => {
    expect(validateQuantityXorTotal({ quantity: '1' })).toEqual([]);
    expect(validateQuantityXorTotal({ total: '1' })).toEqual([]);
  });

  it('rejects both', () => {
    expect(validateQuantityXorTotal({ quantity: '1', total: '1' })).toEqual([
      'quantity: give exactly one of quantity or total, not both',
    ]);
  });

  it('rejects neither, treating null as absent', () => {
    const message = ['quantity: exactly one of quantity or total is required'];
    expect(validateQuantityXorTotal({})).toEqual(message);
    expect(validateQuantityXorTotal({ quantity: null, total: undefined })).toEqual(message);
  });

  it('counts an empty string as given so the amount parser can call it malformed', () => {
    expect(validateQuantityXorTotal({ quantity: '' })).toEqual([]);
  });
});

describe('computeQuote', () => {
  it('computes the total from a quantity: 50000 × 0.5 = 25000.00', () => {
    const result = quote({ price: '50000', quantity: '0.5' });
    expect(result.total.toFixed(2)).toBe('25000.00');
    expect(result.quantity.toFixed()).toBe('0.5');
    expect(result.price.toFixed()).toBe('50000');
  });

  it('computes the quantity from a total, rounded to the underlying: 100 at 30000 → 0.00333333', () => {
    const result = quote({ price: '30000', total: '100' });
    expect(result.quantity.toFixed(8)).toBe('0.00333333');
    expect(result.total.toFixed(2)).toBe('100.00');
  });

  it('rounds a quantity half to even at the underlying precision', () => {
    // 0.000000125 BTC exactly → 0.00000012; 0.000000135 → 0.00000014
    expect(quote({ price: '80000', total: '0.01' }).quantity.toFixed(8)).toBe('0.00000012');
    expect(quote({ side: 'sell', price: '2000000', total: '0.27' }).quantity.toFixed(8)).toBe('0.00000014');
  });

  it('keeps the full precision of an 18-decimal underlying', () => {
    const result = quote({ underlying: ETH, price: '3000', total: '1' });
    expect(result.quantity.toFixed(18)).toBe('0.000333333333333333');
  });

  it('rejects a total too small to buy any of the underlying', () => {
    expect(validationErrors(() => quote({ price: '3000000000', total: '0.01' }))).toEqual([
      'total: too small to buy any BTC at price 3000000000',
    ]);
  });

  it('rejects a quantity worth less than one cent', () => {
    expect(validationErrors(() => quote({ side: 'sell', price: '100', quantity: '0.00000001' }))).toEqual([
      'quantity: too small, worth less than 0.01 USD at price 100',
    ]);
  });

  it('rejects both or neither of quantity and total', () => {
    expect(validationErrors(() => quote({ price: '1', quantity: '1', total: '1' }))).toEqual([
      'quantity: give exactly one of quantity or total, not both',
    ]);
    expect(validationErrors(() => quote({ price: '1' }))).toEqual([
      'quantity: exactly one of quantity or total is required',
    ]);
  });

  it('refuses given amounts the asset cannot hold instead of rounding them', () => {
    expect(validationErrors(() => quote({ price: '1', total: '1.001' }))).toEqual([
      'total: at most 2 decimal places for USD',
    ]);
    expect(validationErrors(() => quote({ price: '1', quantity: '0' }))).toEqual([
      'quantity: must be greater than zero',
    ]);
  });
});

describe('computeConvertQuote (network fee)', () => {
  it('adds the fee notional on top of price × quantity', () => {
    const quote = computeConvertQuote({
      underlying: BTC,
      quoted: USD,
      price: m('30000'),
      networkFeeQuantity: m('0.00001'),
      quantity: m('0.01'),
    });
    expect(quote.total.toFixed(2)).toBe('300.00');
    expect(quote.networkFeeQuantity.toFixed()).toBe('0.00001');
    expect(quote.networkFeeNotional.toFixed(2)).toBe('0.30');
    expect(quote.totalNotional.toFixed(2)).toBe('300.30');
  });

  it('rounds the fee notional half to even at the quoted precision', () => {
    // 0.00000125 × 100000 = 0.125 and 0.00000135 × 100000 = 0.135: both exact ties at the cent.
    expect(networkFeeNotionalOf(m('0.00000125'), m('100000'), USD).toFixed(2)).toBe('0.12');
    expect(networkFeeNotionalOf(m('0.00000135'), m('100000'), USD).toFixed(2)).toBe('0.14');
  });

  it('treats a client total as the asset cost, with the fee added on top', () => {
    const quote = computeConvertQuote({
      underlying: BTC,
      quoted: USD,
      price: m('30000'),
      networkFeeQuantity: m('0.00002'),
      total: m('100'),
    });
    expect(quote.quantity.toFixed(8)).toBe('0.00333333');
    expect(quote.total.toFixed(2)).toBe('100.00');
    expect(quote.networkFeeNotional.toFixed(2)).toBe('0.60');
    expect(quote.totalNotional.toFixed(2)).toBe('100.60');
  });

  it('allows a zero fee', () => {
    const quote = computeConvertQuote({
      underlying: BTC,
      quoted: USD,
      price: m('30000'),
      networkFeeQuantity: m('0'),
      quantity: m('1'),
    });
    expect(quote.totalNotional.toFixed(2)).toBe('30000.00');
  });

  it('treats a malformed fee table entry as an internal error', () => {
    expect(() =>
      computeConvertQuote({
        underlying: BTC,
        quoted: USD,
        price: m('1'),
        networkFeeQuantity: m('-1'),
        quantity: m('1'),
      }),
    ).toThrow(/must not be negative/);
    expect(() =>
      computeConvertQuote({
        underlying: BTC,
        quoted: USD,
        price: m('1'),
        networkFeeQuantity: m('0.000000001'),
        quantity: m('1'),
      }),
    ).toThrow(/decimal places/);
  });
});
