import { ValidationError } from '../domain/errors.js';
import { DEFAULT_ACCOUNT_LABEL, type MovementType } from '../domain/ledger.js';
import { computeQuote, type QuoteAmounts } from '../domain/quotes.js';
import type { AuthContext } from '../domain/caller.js';
import { quoteView } from '../liquidity/quote-view.js';
import { openQuote } from '../liquidity/open-quote.js';
import type { ValidQuoteRequest } from '../liquidity/request-quote.js';
import { type BookedExecution, tradeExecutionItems } from '../liquidity/trade-execution.js';
import { type DealPrice, dealPriceFor } from '../pricing/price-source.js';
import type { Participant } from '../store/entities/participant.js';
import { recordTradesAccepted } from '../observability/metrics.js';
import { newId } from '../store/codes.js';
import { participantActiveCheck } from '../store/participants.js';
import { quoteCreationItem, type StoredQuote } from '../store/quotes.js';
import { book } from '../ledger/engine.js';
import { newBookingId } from '../ledger/booking.js';
import type { RequestClaim } from '../store/windows.js';
import type { AppContext } from '../context.js';

/**
 * A purchase quoted and executed in one step: a reward (the platform pays, its customer receives) and an
 * award-pool funding (the platform pays, its own `awards` account receives). Same pricing as an RFQ, same
 * booking as `POST /liquidity/execute`: one transaction holds the quote (already executed), the movement
 * against the liquidity provider and the settled trade, so nothing can be half-booked.
 */
interface InstantPurchase {
  product: 'reward' | 'award_fund';
  movementType: MovementType;
  /** Always a buy of the underlying, with exactly one of quantity / total. */
  request: Omit<ValidQuoteRequest, 'side'>;
  /** Who receives the underlying, and in which of its accounts. */
  beneficiary: { participant_code: string; account_label: string };
  /**
   * The beneficiary's own check, when it needs its item (a reward's customer): read with the purchase's
   * pricing inputs, in the same call; any problem is a 400 before anything else is answered.
   */
  beneficiaryProblems?: (participant: Participant | undefined) => string[];
}

export interface InstantPurchaseResult {
  request_id: string;
  quote: ReturnType<typeof instantQuoteView>;
  trade_id: string;
  /** The reference API's list of the purchase's trades; the first is `trade_id`. */
  trade_ids_list: string[];
  status: 'Completed';
  /** Price x quantity in the quoted currency (the reference's reward field; the same for an award funding). */
  asset_cost_notional: string;
}

function purchaseResult(requestId: string, quote: StoredQuote, tradeId: string): InstantPurchaseResult {
  return {
    request_id: requestId,
    quote: instantQuoteView(quote),
    trade_id: tradeId,
    trade_ids_list: [tradeId],
    status: 'Completed',
    asset_cost_notional: quote.total,
  };
}

/**
 * The spec's quote object of a reward: the RFQ shape plus the two fields its table adds, the underlying
 * under the name `underlying_currency` and the execution time.
 */
function instantQuoteView(quote: StoredQuote) {
  return { ...quoteView(quote), underlying_currency: quote.underlying, transaction_timestamp: quote.executed_at };
}

/**
 * The deal price of a buy, read in one call with the beneficiary when it has a check of its own; the
 * beneficiary's problems answer first, before any pricing error.
 */
async function priceAfterProblems(
  ctx: AppContext,
  auth: AuthContext,
  purchase: InstantPurchase,
  nowMs: number,
): Promise<DealPrice> {
  const { request, beneficiaryProblems } = purchase;
  const priced = await dealPriceFor(ctx, {
    platformCode: auth.platformCode,
    side: 'buy',
    underlying: request.underlying,
    quoted: request.quoted,
    nowMs,
    participantCode: beneficiaryProblems ? purchase.beneficiary.participant_code : undefined,
  });
  const problems = beneficiaryProblems?.(priced.participant) ?? [];
  if (problems.length > 0) throw new ValidationError(problems);
  if ('error' in priced) throw priced.error;
  return priced.deal;
}

/** The purchase's quote, executed the moment it is made. */
function executedQuote(
  ctx: AppContext,
  auth: AuthContext,
  purchase: InstantPurchase,
  requestId: string,
  priced: { amounts: QuoteAmounts; deal: DealPrice },
  tradeId: string,
  nowMs: number,
): StoredQuote {
  const { product, request, beneficiary } = purchase;
  return {
    ...openQuote(ctx, {
      product,
      requestId,
      platformCode: auth.platformCode,
      platformParticipantCode: auth.participantCode,
      participant: { participant_code: beneficiary.participant_code, platform_code: auth.platformCode },
      accountLabel: beneficiary.account_label,
      side: 'buy',
      underlying: request.underlying,
      quoted: request.quoted,
      amounts: priced.amounts,
      deal: priced.deal,
      quotedBy: request.quantity !== undefined ? 'quantity' : 'total',
      nowMs,
    }),
    // Executed the moment it was made; the expiry only keeps the quote's shape the same as an RFQ's.
    status: 'executed',
    executed_at: nowMs,
    trade_id: tradeId,
  };
}

/** The trade: the beneficiary's account receives the underlying, the platform's `general` account pays. */
function purchaseExecution(
  ctx: AppContext,
  auth: AuthContext,
  purchase: InstantPurchase,
  quote: StoredQuote,
  amounts: QuoteAmounts,
  tradeId: string,
  nowMs: number,
): BookedExecution {
  const { request, beneficiary } = purchase;
  return tradeExecutionItems(ctx, {
    tradeId,
    platformCode: auth.platformCode,
    clientTradeId: quote.quote_id,
    side: 'buy',
    underlying: request.underlying,
    quoted: request.quoted,
    quantity: amounts.quantity,
    total: amounts.total,
    price: amounts.price,
    participant: {
      participant_code: beneficiary.participant_code,
      platform_code: auth.platformCode,
      account_label: beneficiary.account_label,
    },
    underlyingAccount: {
      account: {
        participant_code: beneficiary.participant_code,
        account_group: auth.platformCode,
        account_label: beneficiary.account_label,
        asset: request.underlying.symbol,
      },
      platform_code: auth.platformCode,
    },
    quotedAccount: {
      account: {
        participant_code: auth.participantCode,
        account_group: auth.platformCode,
        account_label: DEFAULT_ACCOUNT_LABEL,
        asset: request.quoted.symbol,
      },
      platform_code: auth.platformCode,
    },
    amountMethod: request.quantity !== undefined ? 'price_and_quantity' : 'amounts_per_party',
    reporter: auth.platformCode,
    movementType: purchase.movementType,
    nowMs,
  });
}

/**
 * Prices and books the purchase for `requestId`. The platform's own `general` account pays the quoted
 * currency (guarded: it never goes negative, a shortfall is a 400). The request's claim commits with the
 * booking, so a retry of a run that died after committing is answered with this result, never a second purchase.
 */
export async function purchaseNow(
  ctx: AppContext,
  auth: AuthContext,
  purchase: InstantPurchase,
  requestId: string,
  claim: RequestClaim,
): Promise<InstantPurchaseResult> {
  const nowMs = ctx.clock.nowMs();
  const deal = await priceAfterProblems(ctx, auth, purchase, nowMs);
  const amounts = computeQuote({ ...purchase.request, side: 'buy', price: deal.price });
  const tradeId = newId();
  const quote = executedQuote(ctx, auth, purchase, requestId, { amounts, deal }, tradeId, nowMs);
  const execution = purchaseExecution(ctx, auth, purchase, quote, amounts, tradeId, nowMs);
  const result = purchaseResult(requestId, quote, tradeId);
  // The request's claim goes first: a run that lost its request to another reads as such.
  // The receiver is still approved when the purchase commits (the reward's customer; for an award funding
  // the platform's own participant): a lock committed after the read above refuses it.
  const stillActive = participantActiveCheck(ctx, purchase.beneficiary.participant_code, 'participant_code');
  await book(ctx, {
    id: newBookingId(nowMs),
    atMs: nowMs,
    movement: execution.movement,
    items: [...claim(result), stillActive, quoteCreationItem(ctx, quote), ...execution.items],
  });
  recordTradesAccepted(ctx.metrics, purchase.product, 1, tradeId);
  return result;
}
