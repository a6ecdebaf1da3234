import Decimal from 'decimal.js';
import type { Asset } from './assets.js';

/**
 * Exact decimal money. Amounts travel as strings, live as Decimal and never pass through a JS number.
 * A private Decimal constructor keeps our precision and rounding settings away from any other user of
 * decimal.js in the same process.
 */
export const Money = Decimal.clone({ precision: 60, rounding: Decimal.ROUND_HALF_EVEN, toExpNeg: -60, toExpPos: 60 });
export type Money = Decimal;

/** The wire format for amounts: digits with an optional decimal point; no sign, no exponent. */
export const AMOUNT_PATTERN = /^\d*\.?\d+$/;

/**
 * Client amounts must stay below this. DynamoDB numbers carry at most 38 significant digits; an amount
 * under 10^15 with up to 18 decimals (ETH) uses at most 33, leaving balances room to grow. Anything bigger
 * is a client mistake (a 400), not a DynamoDB ValidationException (a 500).
 */
export const AMOUNT_LIMIT = new Money('1000000000000000');

export function decimalPlaces(text: string): number {
  const dot = text.indexOf('.');
  return dot === -1 ? 0 : text.length - dot - 1;
}

/**
 * Parses a client-supplied amount for `asset`. Returns the amount or a message for `field`.
 * Too many decimals is an error, never a rounding.
 */
export function parseAmount(
  text: unknown,
  asset: Asset,
  field: string,
  options: { allowZero?: boolean } = {},
): Money | string {
  if (typeof text !== 'string' || !AMOUNT_PATTERN.test(text)) {
    return `${field}: must be a decimal string such as "12.34" (no sign, no exponent)`;
  }
  if (decimalPlaces(text) > asset.precision) {
    return `${field}: at most ${asset.precision} decimal places for ${asset.symbol}`;
  }
  const amount = new Money(text);
  if (amount.isZero() && !options.allowZero) return `${field}: must be greater than zero`;
  if (amount.gte(AMOUNT_LIMIT)) return `${field}: must be less than ${AMOUNT_LIMIT.toFixed()}`;
  return amount;
}

/** Rounds a computed amount half-to-even to the asset's precision. */
export function roundToAsset(amount: Money, asset: Asset): Money {
  return amount.toDecimalPlaces(asset.precision, Money.ROUND_HALF_EVEN);
}

/** Fixed-point text of an amount with exactly the asset's decimals (what responses show). */
export function formatAmount(amount: Money, asset: Asset): string {
  return amount.toFixed(asset.precision);
}

/** Plain (non-exponent) text of an amount, for storage as a DynamoDB number. */
export function plain(amount: Money): string {
  return amount.toFixed();
}
