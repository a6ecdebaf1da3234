import { findAsset } from '../domain/assets.js';
import { ValidationError } from '../domain/errors.js';
import { formatAmount } from '../domain/money.js';
import { computeConvertQuote } from '../domain/quotes.js';
import { validateWithdrawalAddress } from '../domain/withdrawal-address.js';
import type { AuthContext } from '../domain/caller.js';
import { tradingParticipant, validateQuoteRequest, type QuoteRequest } from '../liquidity/request-quote.js';
import { dealPriceFor } from '../pricing/price-source.js';
import { getNetworkFee } from '../store/network-fees.js';
import { putQuote, type StoredQuote } from '../store/quotes.js';
import { convertQuoteView, type ConvertQuoteView } from './convert-quote-view.js';
import { openQuote } from '../liquidity/open-quote.js';
import type { AppContext } from '../context.js';

export const CONVERT_WITHDRAW_PRODUCT = 'convert_withdraw';

interface ConvertQuoteRequest extends QuoteRequest {
  withdrawal_address: string;
}

/**
 * `GET /convert_withdraw/rfq`: prices buying `underlying` and withdrawing it to `withdrawal_address`. Buy
 * only; the address must be valid on the underlying's network; the network fee comes from the fee table and
 * is fixed in the quote. Every problem is reported at once. Balances are checked at execution, as for RFQs.
 */
export async function requestConvertQuote(
  ctx: AppContext,
  auth: AuthContext,
  request: ConvertQuoteRequest,
  requestId: string,
): Promise<ConvertQuoteView> {
  const { errors, value } = validateQuoteRequest(request, { allowedSides: ['buy'] });
  const underlying = findAsset(request.underlying);
  const network = underlying?.type === 'crypto' ? underlying.network : null;
  const nowMs = ctx.clock.nowMs();
  // The fee, participant and price reads are independent, so they run together, as in an RFQ; a 400 for the
  // request still wins over a 503 for the price.
  const pricing = value
    ? dealPriceFor(ctx, {
        platformCode: auth.platformCode,
        side: 'buy',
        underlying: value.underlying,
        quoted: value.quoted,
        nowMs,
      })
    : undefined;
  const participantErrors: string[] = [];
  const [fee, participant] = await Promise.all([
    underlying && network ? getNetworkFee(ctx, underlying.symbol) : undefined,
    tradingParticipant(ctx, auth, request.participant_code, participantErrors),
  ]);
  if (underlying && network) {
    const problem = validateWithdrawalAddress(network, request.withdrawal_address);
    if (problem) errors.push(problem);
    if (!fee) errors.push(`underlying: withdrawals of ${underlying.symbol} are not available (no network fee is set)`);
  }
  errors.push(...participantErrors);
  if (errors.length > 0 || !value || !participant || !fee || !pricing) throw new ValidationError(errors);
  const priced = await pricing;
  if ('error' in priced) throw priced.error;
  const { deal } = priced;
  const amounts = computeConvertQuote({ ...value, price: deal.price, networkFeeQuantity: fee.quantity });
  const quote: StoredQuote = {
    ...openQuote(ctx, {
      product: CONVERT_WITHDRAW_PRODUCT,
      requestId,
      platformCode: auth.platformCode,
      platformParticipantCode: auth.participantCode,
      participant,
      accountLabel: request.account_label,
      side: 'buy',
      underlying: value.underlying,
      quoted: value.quoted,
      amounts,
      deal,
      quotedBy: value.quantity !== undefined ? 'quantity' : 'total',
      nowMs,
    }),
    withdrawal: {
      address: request.withdrawal_address,
      network_fee_quantity: formatAmount(amounts.networkFeeQuantity, value.underlying),
      network_fee_notional: formatAmount(amounts.networkFeeNotional, value.quoted),
      total_notional: formatAmount(amounts.totalNotional, value.quoted),
    },
  };
  await putQuote(ctx, quote);
  return convertQuoteView(quote);
}
