import { findAsset, type Asset } from '../domain/assets.js';
import { NotFoundError, ServiceUnavailableError, ValidationError } from '../domain/errors.js';
import { AMOUNT_PATTERN, Money } from '../domain/money.js';
import { priceWithSpread, type QuoteSide } from '../domain/quotes.js';
import { setPlatformSpread } from '../store/platforms.js';
import {
  getPricingInputs,
  getReferencePrice,
  putReferencePrice,
  type PricingInputs,
  type StoredPrice,
} from '../store/prices.js';
import type { Participant } from '../store/entities/participant.js';
import type { AppContext } from '../context.js';

/**
 * Reference prices are the items ops set with `price set`; on AWS a market-data feed writes the same items.
 * Quotes read them only through `freshReferencePrice`, so the freshness rule below holds for every quote.
 */
export type ReferencePrice = StoredPrice;

/**
 * A stale price is not an answer we can quote on, and it won't fix itself within a second, so clients are
 * told to come back later rather than hammering us.
 */
const STALE_PRICE_RETRY_AFTER_SECONDS = 30;

/**
 * The reference price of a pair, refused with 503 when there is none or it is older than
 * PRICE_MAX_AGE_SECONDS: quoting on an old price would hand the client (or the house) a free option.
 */
function freshReferencePrice(
  ctx: Pick<AppContext, 'config'>,
  price: StoredPrice | undefined,
  pair: string,
  nowMs: number,
): ReferencePrice {
  if (!price) throw new ServiceUnavailableError(`no price available for ${pair}`, STALE_PRICE_RETRY_AFTER_SECONDS);
  const maxAgeMs = ctx.config.PRICE_MAX_AGE_SECONDS * 1000;
  if (nowMs - price.updated_at_ms > maxAgeMs) {
    throw new ServiceUnavailableError(`the price for ${pair} is stale`, STALE_PRICE_RETRY_AFTER_SECONDS);
  }
  return price;
}

export interface DealPrice {
  /** What the platform's client trades at: the reference moved by the platform's spread against the client. */
  price: Money;
  reference: ReferencePrice;
  spreadBps: Money;
}

/** The deal price from what was read: the platform's spread applied to the fresh reference price. */
function dealPriceOf(
  ctx: Pick<AppContext, 'config'>,
  inputs: PricingInputs,
  platformCode: string,
  side: QuoteSide,
  pair: string,
  nowMs: number,
): DealPrice {
  const reference = freshReferencePrice(ctx, inputs.price, pair, nowMs);
  if (!inputs.platform) throw new NotFoundError(`platform not found: ${platformCode}`);
  const spreadBps = new Money(inputs.platform.spread_bps);
  return { price: priceWithSpread(reference.price, side, spreadBps), reference, spreadBps };
}

/**
 * The price a platform's client gets for `side` now (the fresh reference price plus the platform's spread), read
 * in one call with the participant the deal is for when one is named (a reward's customer). It never rejects: a
 * pricing error, or the read's, comes back as `error`, so a caller may start it beside its other reads and answer
 * their problems (a 400) before it (a 503).
 */
export async function dealPriceFor(
  ctx: AppContext,
  wanted: {
    platformCode: string;
    side: QuoteSide;
    underlying: Asset;
    quoted: Asset;
    nowMs: number;
    participantCode?: string;
  },
): Promise<{ deal: DealPrice; participant?: Participant } | { error: unknown; participant?: Participant }> {
  let inputs: PricingInputs;
  try {
    inputs = await getPricingInputs(ctx, {
      platformCode: wanted.platformCode,
      underlying: wanted.underlying.symbol,
      quotedCurrency: wanted.quoted.symbol,
      participantCode: wanted.participantCode,
    });
  } catch (error) {
    return { error };
  }
  const pair = `${wanted.underlying.symbol}/${wanted.quoted.symbol}`;
  try {
    return {
      deal: dealPriceOf(ctx, inputs, wanted.platformCode, wanted.side, pair, wanted.nowMs),
      participant: inputs.participant,
    };
  } catch (error) {
    return { error, participant: inputs.participant };
  }
}

// ---- operations -----------------------------------------------------------------------------------------

/** Significant digits a price may carry: far beyond any market's tick, and keeps prices exact in every store. */
const MAX_PRICE_DIGITS = 38;
/**
 * Decimal places a reference price may carry. No market quotes a pair finer than 10^-12 of the quoted
 * currency; more is a typo or a floating-point artefact (`0.30000000000000004`), so it is refused.
 */
const MAX_PRICE_DECIMALS = 12;
/** A move larger than this from the stored price is more likely a typo than the market: `--force` confirms it. */
const MAX_UNFORCED_PRICE_MOVE = new Money('0.5');

/**
 * `price set`: validates the pair and the price (positive, at most 12 decimals), refuses a move of more than
 * 50% from the stored price unless `force`, then stores it as observed now.
 */
export async function setReferencePrice(
  ctx: AppContext,
  underlying: string,
  quotedCurrency: string,
  priceText: string,
  options: { force?: boolean } = {},
  nowMs = ctx.clock.nowMs(),
) {
  const errors: string[] = [];
  const base = findAsset(underlying);
  const quote = findAsset(quotedCurrency);
  if (!base) errors.push(`underlying: unknown asset '${underlying}'`);
  if (!quote) errors.push(`quoted_currency: unknown asset '${quotedCurrency}'`);
  if (base && quote && base.symbol === quote.symbol) errors.push('quoted_currency: must differ from underlying');
  if (!AMOUNT_PATTERN.test(priceText))
    errors.push('price: must be a decimal string such as "50000.25" (no sign, no exponent)');
  else if (new Money(priceText).lte(0)) errors.push('price: must be greater than zero');
  else if (new Money(priceText).precision(true) > MAX_PRICE_DIGITS)
    errors.push(`price: at most ${MAX_PRICE_DIGITS} significant digits`);
  else if (new Money(priceText).decimalPlaces() > MAX_PRICE_DECIMALS)
    errors.push(`price: at most ${MAX_PRICE_DECIMALS} decimal places`);
  if (errors.length > 0 || !base || !quote) throw new ValidationError(errors);

  const current = await getReferencePrice(ctx, base.symbol, quote.symbol);
  if (current && !options.force) {
    const move = new Money(priceText).minus(current.price).abs().div(current.price);
    if (move.gt(MAX_UNFORCED_PRICE_MOVE)) {
      throw new ValidationError([
        `price: ${priceText} moves ${base.symbol}/${quote.symbol} ${move.times(100).toDecimalPlaces(1).toFixed()}% from the stored ${current.price.toFixed()}; repeat with --force if that is right`,
      ]);
    }
  }

  const stored = await putReferencePrice(ctx, {
    underlying: base.symbol,
    quoted_currency: quote.symbol,
    price: new Money(priceText),
    updated_at_ms: nowMs,
  });
  if (!stored) throw new ValidationError([`price: a newer price for ${base.symbol}/${quote.symbol} is already stored`]);
  return {
    underlying: base.symbol,
    quoted_currency: quote.symbol,
    price: new Money(priceText).toFixed(),
    updated_at: nowMs,
  };
}

/** `platform spread`: basis points added against the client on every quote of the platform. */
export async function setSpread(ctx: AppContext, platformCode: string, bpsText: string) {
  // Checked with the same rule quotes apply, so a spread that would break pricing is refused here.
  if (!AMOUNT_PATTERN.test(bpsText))
    throw new ValidationError(['bps: must be a decimal string such as "25" or "12.5"']);
  priceWithSpread(new Money(1), 'sell', new Money(bpsText));
  const bps = new Money(bpsText).toFixed();
  if (!(await setPlatformSpread(ctx, platformCode, bps)))
    throw new NotFoundError(`platform not found: ${platformCode}`);
  return { platform_code: platformCode, spread_bps: bps };
}
