import { findAsset } from '../domain/assets.js';
import { formatAmount, Money } from '../domain/money.js';
import type { StoredQuote } from '../store/quotes.js';

/**
 * What the spread added to (buy) or took from (sell) the reference price, over the whole quantity, in the
 * quoted currency: |price - reference price| x quantity, rounded half to even at its precision.
 */
export function spreadNotional(quote: StoredQuote): string {
  const quoted = findAsset(quote.quoted_currency);
  if (!quoted) throw new Error(`quote ${quote.quote_id}: unknown quoted currency ${quote.quoted_currency}`);
  return formatAmount(new Money(quote.price).minus(quote.reference_price).abs().times(quote.quantity), quoted);
}

/**
 * A quote as clients see it: the reference API's RFQ shape, every field present (null when it has no value
 * here). `total_notional` is what a buyer pays or a seller receives in the quoted currency (no fees are
 * charged on top of the spread here).
 * `obo_participant` names the customer the platform is trading for, and is null when the platform trades
 * for itself (the spec: it holds the beneficiary "when that participant is not the submitter").
 */
export function quoteView(quote: StoredQuote) {
  return {
    request_id: quote.request_id,
    participant_code: quote.participant_code,
    quoted_currency: quote.quoted_currency,
    side: quote.side,
    quantity: quote.quantity,
    price: quote.price,
    quote_id: quote.quote_id,
    expire_ts: quote.expire_ts,
    account_group: quote.account_group,
    account_label: quote.account_label,
    obo_participant: quote.on_behalf_of
      ? {
          participant_code: quote.participant_code,
          account_group: quote.account_group,
          account_label: quote.account_label,
        }
      : null,
    underlying: quote.underlying,
    total_notional: quote.total,
    // No fee or commission is charged on top of the spread, so the asset costs the whole total.
    asset_cost_notional: quote.total,
    spread_notional: spreadNotional(quote),
    spread_bps: quote.spread_bps,
    // The reference API's optional quote fields this service has no value for: present, null.
    settlement_type: null,
    issuer_fee_payor_type: null,
    issuer_fee_rate: null,
    issuer_fee_amount: null,
    payment_processor: null,
  };
}

export type QuoteView = ReturnType<typeof quoteView>;
