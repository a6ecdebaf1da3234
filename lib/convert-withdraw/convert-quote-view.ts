import { quoteView } from '../liquidity/quote-view.js';
import type { StoredQuote } from '../store/quotes.js';

/**
 * A convert-withdraw quote as clients see it: the RFQ shape with the spec's convert-quote fields.
 * `total_notional` is everything the participant pays (asset cost + network fee notional, see
 * `computeConvertQuote`), `asset_cost_notional` the asset alone. The spec's sample carries `main_quote_id`
 * without saying what it links; a convert quote is its own main quote, so it repeats `quote_id`.
 */
export function convertQuoteView(quote: StoredQuote) {
  const withdrawal = quote.withdrawal;
  if (!withdrawal) throw new Error(`quote ${quote.quote_id} is not a convert-withdraw quote`);
  return {
    ...quoteView(quote),
    total_notional: withdrawal.total_notional,
    network_fee_notional: withdrawal.network_fee_notional,
    network_fee_quantity: withdrawal.network_fee_quantity,
    main_quote_id: quote.quote_id,
    asset_cost_notional: quote.total,
    withdrawal_address: withdrawal.address,
  };
}

export type ConvertQuoteView = ReturnType<typeof convertQuoteView>;
