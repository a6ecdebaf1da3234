import type { StoredQuote } from '../store/quotes.js';

/**
 * A quote as clients see it: the reference API's RFQ shape. `total_notional` is what a buyer pays or a
 * seller receives in the quoted currency (no fees are charged on top of the spread here).
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
      ? { participant_code: quote.participant_code, account_group: quote.account_group, account_label: quote.account_label }
      : null,
    underlying: quote.underlying,
    total_notional: quote.total,
  };
}

export type QuoteView = ReturnType<typeof quoteView>;
