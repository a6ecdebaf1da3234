import type { Asset } from './assets.js';
import { ValidationError } from './errors.js';
import { Money, roundToAsset } from './money.js';

export type QuoteSide = 'buy' | 'sell';

const BPS_PER_UNIT = new Money(10_000);

/**
 * The price a platform's client trades at. A buyer pays above the reference and a seller receives below
 * it, so the spread is always in the house's favour. The result is not rounded: a price is not an amount
 * of any asset, and rounding it here would shift every amount computed from it.
 */
export function priceWithSpread(reference: Money, side: QuoteSide, spreadBps: Money): Money {
  if (!reference.isFinite() || reference.lte(0)) throw new Error('reference price must be positive');
  // At 10,000 bps a sell price would reach zero and every amount derived from it would be meaningless.
  if (!spreadBps.isFinite() || spreadBps.isNeg() || spreadBps.gte(BPS_PER_UNIT)) {
    throw new ValidationError(['spread: must be at least 0 and below 10000 basis points']);
  }
  const fraction = spreadBps.div(BPS_PER_UNIT);
  return side === 'buy' ? reference.mul(fraction.plus(1)) : reference.mul(new Money(1).minus(fraction));
}

/**
 * Messages for a request that must carry exactly one of `quantity` or `total`. Absent means undefined or
 * null; an empty string counts as given so that the amount parser reports it as malformed instead of
 * this check calling it missing.
 */
export function validateQuantityXorTotal(input: { quantity?: unknown; total?: unknown }): string[] {
  const hasQuantity = input.quantity !== undefined && input.quantity !== null;
  const hasTotal = input.total !== undefined && input.total !== null;
  if (hasQuantity && hasTotal) return ['quantity: give exactly one of quantity or total, not both'];
  if (!hasQuantity && !hasTotal) return ['quantity: exactly one of quantity or total is required'];
  return [];
}

interface QuoteInput {
  side: QuoteSide;
  underlying: Asset;
  quoted: Asset;
  price: Money;
  /** Amount of the underlying. */
  quantity?: Money;
  /** Amount of the quoted currency. */
  total?: Money;
}

export interface QuoteAmounts {
  quantity: Money;
  total: Money;
  price: Money;
}

/**
 * Fills in whichever of quantity / total the client left out. The given side is kept exactly as the client
 * asked (they pay or receive precisely that `total`, or trade precisely that `quantity`); only the computed
 * side is rounded half-even to its asset's precision, so `price × quantity` may differ from `total` by less
 * than one unit of rounding.
 */
export function computeQuote(input: QuoteInput): QuoteAmounts {
  const { side, underlying, quoted, price, quantity: givenQuantity, total: givenTotal } = input;
  if (!price.isFinite() || price.lte(0)) throw new Error('quote price must be positive');

  if (givenQuantity !== undefined && givenTotal === undefined) {
    assertClientAmount(givenQuantity, underlying, 'quantity');
    const total = roundToAsset(price.mul(givenQuantity), quoted);
    if (total.isZero()) {
      throw new ValidationError([
        `quantity: too small, worth less than ${smallestUnit(quoted)} ${quoted.symbol} at price ${price.toFixed()}`,
      ]);
    }
    return { quantity: givenQuantity, total, price };
  }

  if (givenTotal !== undefined && givenQuantity === undefined) {
    assertClientAmount(givenTotal, quoted, 'total');
    const quantity = roundToAsset(givenTotal.div(price), underlying);
    if (quantity.isZero()) {
      throw new ValidationError([`total: too small to ${side} any ${underlying.symbol} at price ${price.toFixed()}`]);
    }
    return { quantity, total: givenTotal, price };
  }

  throw new ValidationError(validateQuantityXorTotal(input));
}

interface ConvertQuoteInput {
  underlying: Asset;
  quoted: Asset;
  /** The buy price (convert-withdraw only buys). */
  price: Money;
  /** Network fee in units of the underlying, from the fee table. */
  networkFeeQuantity: Money;
  quantity?: Money;
  total?: Money;
}

interface ConvertQuoteAmounts extends QuoteAmounts {
  networkFeeQuantity: Money;
  /** `networkFeeQuantity × price`, rounded half-even to the quoted currency. */
  networkFeeNotional: Money;
  /** What the client is charged in the quoted currency: `total + networkFeeNotional`. */
  totalNotional: Money;
}

/**
 * Convert-withdraw pricing. `total` (the asset cost notional) never includes the network fee: a client
 * giving `total` pays that much for the asset and the fee is added on top, exactly as when they give
 * `quantity`. This matches the reference API's default of `fee_inclusive=false` and keeps one formula for
 * both inputs: `total_notional = total + network_fee_notional`, where `total` is either the client's figure
 * or `price × quantity` rounded. The spec's own formula multiplies the two fee fields together, which
 * mixes units, so the design replaces it with this one.
 */
export function computeConvertQuote(input: ConvertQuoteInput): ConvertQuoteAmounts {
  const { underlying, quoted, price, networkFeeQuantity } = input;
  // The fee table is configuration, so a bad entry is our fault (500), not the client's.
  if (!networkFeeQuantity.isFinite() || networkFeeQuantity.isNeg()) {
    throw new Error(`network fee for ${underlying.symbol} must not be negative`);
  }
  if (networkFeeQuantity.decimalPlaces() > underlying.precision) {
    throw new Error(`network fee for ${underlying.symbol} has more than ${underlying.precision} decimal places`);
  }
  const amounts = computeQuote({ ...input, side: 'buy' });
  const networkFeeNotional = networkFeeNotionalOf(networkFeeQuantity, price, quoted);
  return { ...amounts, networkFeeQuantity, networkFeeNotional, totalNotional: amounts.total.plus(networkFeeNotional) };
}

export function networkFeeNotionalOf(networkFeeQuantity: Money, price: Money, quoted: Asset): Money {
  return roundToAsset(networkFeeQuantity.mul(price), quoted);
}

/**
 * The HTTP layer already rejects malformed client amounts; this guards the arithmetic against a caller that
 * skipped it, since an over-precise or non-positive input would be booked as-is.
 */
function assertClientAmount(amount: Money, asset: Asset, field: string): void {
  if (!amount.isFinite() || amount.lte(0)) throw new ValidationError([`${field}: must be greater than zero`]);
  if (amount.decimalPlaces() > asset.precision) {
    throw new ValidationError([`${field}: at most ${asset.precision} decimal places for ${asset.symbol}`]);
  }
}

function smallestUnit(asset: Asset): string {
  return new Money(1).div(new Money(10).pow(asset.precision)).toFixed(asset.precision);
}
