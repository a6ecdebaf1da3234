import { findAsset, listAssets } from '../domain/assets.js';
import { ValidationError } from '../domain/errors.js';
import { getReferencePrices } from '../store/prices.js';
import type { AppContext } from '../context.js';

interface IndexFilters {
  underlying?: string;
  quoted_currency?: string;
}

/**
 * `GET /index`: the reference prices quotes are made from (before any platform's spread), one per pair of
 * registry assets that has a price, with when it was observed and whether it is still fresh enough to quote
 * on (`PRICE_MAX_AGE_SECONDS`). The registry bounds the pairs (under 100), so this is one BatchGetItem
 * whatever the history: a list small enough to answer whole, like `GET /assets`.
 */
export async function listIndexPrices(ctx: AppContext, filters: IndexFilters) {
  const problems: string[] = [];
  if (filters.underlying !== undefined && !findAsset(filters.underlying))
    problems.push(`underlying: unknown asset '${filters.underlying}'`);
  if (filters.quoted_currency !== undefined && !findAsset(filters.quoted_currency))
    problems.push(`quoted_currency: unknown asset '${filters.quoted_currency}'`);
  if (problems.length > 0) throw new ValidationError(problems);

  const symbols = listAssets().map((asset) => asset.symbol);
  const pairs = symbols.flatMap((underlying) =>
    symbols
      .filter((quoted) => quoted !== underlying)
      .map((quoted_currency) => ({ underlying, quoted_currency }))
      .filter(
        (pair) =>
          (filters.underlying ?? pair.underlying) === pair.underlying &&
          (filters.quoted_currency ?? pair.quoted_currency) === pair.quoted_currency,
      ),
  );
  const prices = await getReferencePrices(ctx, pairs);
  const nowMs = ctx.clock.nowMs();
  const maxAgeMs = ctx.config.PRICE_MAX_AGE_SECONDS * 1000;
  const order = new Map(pairs.map((pair, i) => [`${pair.underlying}/${pair.quoted_currency}`, i]));
  return {
    message: prices
      .sort(
        (a, b) =>
          order.get(`${a.underlying}/${a.quoted_currency}`)! - order.get(`${b.underlying}/${b.quoted_currency}`)!,
      )
      .map((price) => ({
        underlying: price.underlying,
        quoted_currency: price.quoted_currency,
        symbol: `${price.underlying}/${price.quoted_currency}`,
        price: price.price.toFixed(),
        timestamp: price.updated_at_ms,
        fresh: nowMs - price.updated_at_ms <= maxAgeMs,
      })),
  };
}
