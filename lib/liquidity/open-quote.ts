import type { Asset } from '../domain/assets.js';
import { DEFAULT_ACCOUNT_LABEL } from '../domain/ledger.js';
import { formatAmount, type Money } from '../domain/money.js';
import type { QuoteSide } from '../domain/quotes.js';
import type { DealPrice } from '../pricing/price-source.js';
import { newId } from '../store/codes.js';
import type { StoredQuote } from '../store/quotes.js';
import type { AppContext } from '../context.js';

interface OpenQuoteInput {
  product: StoredQuote['product'];
  requestId: string;
  platformCode: string;
  /** The platform's own participant: a quote for anyone else is made on their behalf. */
  platformParticipantCode: string;
  /** Whose accounts trade; they live in the group of the participant's platform. */
  participant: { participant_code: string; platform_code: string };
  /** The account label the quote trades (`general` when the client named none). */
  accountLabel?: string;
  side: QuoteSide;
  underlying: Asset;
  quoted: Asset;
  amounts: { quantity: Money; total: Money; price: Money };
  deal: DealPrice;
  quotedBy: 'quantity' | 'total';
  nowMs: number;
}

/**
 * A priced quote, open for QUOTE_TTL_SECONDS. Every product that prices a purchase (RFQ, convert-withdraw,
 * rewards, award funding) records its quote in this one shape, so execution and the views read them alike.
 */
export function openQuote(ctx: AppContext, input: OpenQuoteInput): StoredQuote {
  return {
    quote_id: newId(),
    product: input.product,
    request_id: input.requestId,
    platform_code: input.platformCode,
    participant_code: input.participant.participant_code,
    account_group: input.participant.platform_code,
    account_label: input.accountLabel ?? DEFAULT_ACCOUNT_LABEL,
    on_behalf_of: input.participant.participant_code !== input.platformParticipantCode,
    side: input.side,
    underlying: input.underlying.symbol,
    quoted_currency: input.quoted.symbol,
    quantity: formatAmount(input.amounts.quantity, input.underlying),
    total: formatAmount(input.amounts.total, input.quoted),
    price: input.amounts.price.toFixed(),
    reference_price: input.deal.reference.price.toFixed(),
    spread_bps: input.deal.spreadBps.toFixed(),
    quoted_by: input.quotedBy,
    created_at: input.nowMs,
    expire_ts: input.nowMs + ctx.config.QUOTE_TTL_SECONDS * 1000,
    status: 'open',
    executed_at: null,
    trade_id: null,
  };
}
