import Decimal from 'decimal.js';

/**
 * The simulation's reference model: what each accepted operation must have booked, computed from the
 * operation's inputs and the run's set-up (reference prices, the platforms' spread, the network fee) by the
 * rules of the API and design (docs/ledger.md, the quote and trade fields of the API), with decimal.js of its
 * own. It deliberately calls nothing in lib/domain: a rule broken there (a fee rounded before it is priced, a
 * spread applied the wrong way, a quantity rounded the wrong way) would be broken in the model too, and the
 * check would prove nothing. The ledger check proves the books agree with themselves; this proves each
 * amount in them is the right one.
 */

const D = Decimal.clone({ precision: 60, rounding: Decimal.ROUND_HALF_EVEN, toExpNeg: -60, toExpPos: 60 });
export type Amount = InstanceType<typeof D>;
export const amount = (value: string | number | Amount): Amount => new D(value);

/** Decimal places per asset (the registry the spec's assets list gives). */
const PRECISION: Record<string, number> = { USD: 2, EUR: 2, BTC: 8, ETH: 18, LTC: 8, SOL: 9 };

/** The run's reference prices (set with `price set` before the operations). */
export const REFERENCE_PRICES = [
  ['BTC', 'USD', '50000'],
  ['ETH', 'USD', '2000'],
  ['LTC', 'USD', '100'],
  ['SOL', 'USD', '150'],
  ['ETH', 'EUR', '2500'],
] as const;
/** Every simulated platform's spread, in basis points. */
export const SPREAD_BPS = '25';
/** The network fee of a convert-withdraw of ETH, in ETH (`fee set`). */
export const NETWORK_FEES = { ETH: '0.002' } as const;

/** An amount of `asset` at its precision, half to even (how the API rounds a computed amount). */
export function atPrecision(value: Amount, asset: string): Amount {
  const places = PRECISION[asset];
  if (places === undefined) throw new Error(`model: no precision for ${asset}`);
  return value.toDecimalPlaces(places, D.ROUND_HALF_EVEN);
}

/** A buy's price: the reference price plus the spread (a buyer pays above the reference), unrounded. */
export function buyPrice(underlying: string, quoted: string): Amount {
  const found = REFERENCE_PRICES.find(([u, q]) => u === underlying && q === quoted);
  if (!found) throw new Error(`model: no reference price for ${underlying}/${quoted}`);
  return new D(found[2]).times(new D(1).plus(new D(SPREAD_BPS).div(10_000)));
}

export interface QuoteModel {
  price: Amount;
  quantity: Amount;
  total: Amount;
}

/** A buy priced by what the client pays: the total exactly as given, the quantity rounded to the underlying. */
export function buyByTotal(underlying: string, quoted: string, total: string): QuoteModel {
  const price = buyPrice(underlying, quoted);
  return { price, quantity: atPrecision(new D(total).div(price), underlying), total: new D(total) };
}

/** A buy priced by the quantity: the quantity exactly as given, the total rounded to the quoted currency. */
export function buyByQuantity(underlying: string, quoted: string, quantity: string): QuoteModel {
  const price = buyPrice(underlying, quoted);
  return { price, quantity: new D(quantity), total: atPrecision(price.times(quantity), quoted) };
}

/**
 * A convert-withdraw (a buy by quantity): the network fee is priced in the quoted currency and then rounded
 * (fee quantity x price, half to even), and charged on top of the asset's cost.
 */
export function convertByQuantity(
  underlying: keyof typeof NETWORK_FEES,
  quoted: string,
  quantity: string,
): QuoteModel & { networkFeeQuantity: Amount; networkFeeNotional: Amount; totalNotional: Amount } {
  const quote = buyByQuantity(underlying, quoted, quantity);
  const networkFeeQuantity = new D(NETWORK_FEES[underlying]);
  const networkFeeNotional = atPrecision(networkFeeQuantity.times(quote.price), quoted);
  return { ...quote, networkFeeQuantity, networkFeeNotional, totalNotional: quote.total.plus(networkFeeNotional) };
}

/** A reported trade's notional: price x quantity in the quoted currency, at its precision. */
export function tradeNotional(price: string, quantity: string, quoted: string): Amount {
  return atPrecision(new D(price).times(quantity), quoted);
}

/** Where money sits, as the model names it: participant, account label and asset (the group is the platform's). */
export type Holding = `${string} ${string} ${string}`;
export const holding = (participant: string, label: string, asset: string): Holding =>
  `${participant} ${label} ${asset}`;

/** The net change per holding a booking (one or more movements) must make, the outside world's accounts left out. */
export class Net {
  readonly changes = new Map<Holding, Amount>();

  add(at: Holding, change: string | Amount): this {
    const sum = (this.changes.get(at) ?? new D(0)).plus(change);
    if (sum.isZero()) this.changes.delete(at);
    else this.changes.set(at, sum);
    return this;
  }

  /** Only the holdings of these assets (a booking whose other legs the model doesn't price). */
  only(assets: readonly string[]): Net {
    const kept = new Net();
    for (const [at, change] of this.changes) if (assets.includes(at.split(' ')[2]!)) kept.add(at, change);
    return kept;
  }

  /** What differs from `expected`, or undefined when every holding moved exactly as expected. */
  differenceFrom(expected: Net): string | undefined {
    const problems: string[] = [];
    for (const at of new Set([...expected.changes.keys(), ...this.changes.keys()])) {
      const want = expected.changes.get(at) ?? new D(0);
      const got = this.changes.get(at) ?? new D(0);
      if (!want.eq(got)) problems.push(`${at}: booked ${got.toFixed()}, the model says ${want.toFixed()}`);
    }
    return problems.length === 0 ? undefined : problems.join('; ');
  }
}

/** A stored movement leg as the table holds it (numbers wrapped or plain). */
export interface StoredLeg {
  participant_code: string;
  account_label: string;
  asset: string;
  amount: unknown;
}

const SYSTEM_PREFIX = 'SYS0';

/** The net of movements' legs, leaving out the system participants (liquidity provider, boundary, escrow, fees). */
export function netOfLegs(legs: readonly StoredLeg[]): Net {
  const net = new Net();
  for (const leg of legs) {
    if (leg.participant_code.startsWith(SYSTEM_PREFIX)) continue;
    net.add(holding(leg.participant_code, leg.account_label, leg.asset), textOf(leg.amount));
  }
  return net;
}

export function textOf(value: unknown): string {
  if (value && typeof value === 'object' && 'value' in value) return String((value as { value: unknown }).value);
  return String(value);
}

/** An answer's amount field against the model's: undefined when equal as numbers, else what differs. */
export function fieldDiffers(field: string, expected: Amount, found: unknown): string | undefined {
  if (typeof found !== 'string' || !/^-?\d+(\.\d+)?$/.test(found))
    return `${field}: ${JSON.stringify(found)}, the model says ${expected.toFixed()}`;
  return new D(found).eq(expected) ? undefined : `${field}: ${found}, the model says ${expected.toFixed()}`;
}
