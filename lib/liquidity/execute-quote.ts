import { randomInt } from 'node:crypto';
import { ACH_ASSET, achClearingAccount, type PlatformAccount } from '../domain/ach-clearing.js';
import { type Asset, findAsset } from '../domain/assets.js';
import {
  BookingQueuedError,
  ConflictError,
  NotFoundError,
  QuoteExpiredError,
  ServiceUnavailableError,
  ValidationError,
} from '../domain/errors.js';
import { formatAmount, Money } from '../domain/money.js';
import { achPaymentAmount, achTransferType, parseFundingDetails, type FundingDetails } from '../domain/payments.js';
import type { AuthContext } from '../domain/caller.js';
import { newId } from '../store/codes.js';
import { participantActiveCheck } from '../store/participants.js';
import { paymentCreationItem } from '../store/payments.js';
import { type Payment } from '../domain/payments.js';
import { getQuote, QUOTE_ALREADY_EXECUTED, quoteExecutionItem, type StoredQuote } from '../store/quotes.js';
import type { TaggedItem } from '../store/table/transaction-items.js';
import { book } from '../ledger/engine.js';
import { newBookingId } from '../ledger/booking.js';
import type { Movement } from '../domain/ledger.js';
import { NO_REQUEST_CLAIM, type RequestClaim } from '../store/windows.js';
import { quoteView, type QuoteView } from './quote-view.js';
import { type BookedExecution, quoteExecutionTerms, tradeExecutionItems } from './trade-execution.js';
import type { AppContext } from '../context.js';
import { recordPaymentStatus, recordTradesAccepted } from '../observability/metrics.js';

interface ExecuteRequest {
  quote_id: string;
  funding_details?: unknown;
}

interface ExecutionResult {
  request_id: string;
  quote: QuoteView;
  trade_id: string;
  /** The reference API's list of the execution's trades; the first is `trade_id` (one trade per execution here). */
  trade_ids_list: string[];
  status: 'Completed';
  /** ACH executions: what the bank moves (trade amount plus the fee for a buy, minus it for a sell); else null. */
  payment_amount: string | null;
}

/**
 * A platform's open quote of `product`, or the reason it can't be executed. Another platform's quote, or
 * another product's, reads as unknown. Executed is checked before expired: a quote that was executed and
 * has since expired is still a duplicate execution, which is what the client needs to hear.
 */
export async function executableQuote(
  ctx: AppContext,
  platformCode: string,
  quoteId: string,
  product: StoredQuote['product'],
  nowMs: number,
): Promise<StoredQuote> {
  const quote = await getQuote(ctx, quoteId);
  if (!quote || quote.platform_code !== platformCode || quote.product !== product)
    throw new NotFoundError(`quote not found: ${quoteId}`);
  if (quote.status !== 'open') throw new ConflictError([QUOTE_ALREADY_EXECUTED]);
  if (nowMs >= quote.expire_ts) throw new QuoteExpiredError();
  return quote;
}

/**
 * Books a quote's execution: the request's claims, the quote open -> executed, the quote's participant still
 * approved, then `items` and the movement, in one booking. The claims go first (a replay of the request that
 * executed the quote hears it is one, or gets its answer), then the quote's condition: when a duplicate execution
 * also lacks funds, the duplicate is what the client needs to hear. The participant may have been locked since it
 * was quoted: the booking holds only while it is approved.
 */
export async function commitQuoteExecution(
  ctx: AppContext,
  quote: Pick<StoredQuote, 'quote_id' | 'participant_code'>,
  tradeId: string,
  nowMs: number,
  movement: Movement,
  items: readonly TaggedItem[],
  claims: readonly TaggedItem[] = [],
): Promise<void> {
  const quoteId = quote.quote_id;
  try {
    await book(ctx, {
      id: newBookingId(nowMs),
      atMs: nowMs,
      movement,
      items: [
        ...claims,
        quoteExecutionItem(ctx, quoteId, tradeId, nowMs),
        participantActiveCheck(ctx, quote.participant_code, 'participant_code'),
        ...items,
      ],
    });
  } catch (error) {
    // Conflict retries exhausted: many executions of this quote raced. If one of them won, this one is a
    // duplicate like any other, not a reason to retry. Not so a booking still queued behind a hot account:
    // the winner may be this very booking, whose answer its request id will get.
    if (
      error instanceof ServiceUnavailableError &&
      !(error instanceof BookingQueuedError) &&
      (await getQuote(ctx, quoteId))?.status !== 'open'
    ) {
      throw new ConflictError([QUOTE_ALREADY_EXECUTED]);
    }
    throw error;
  }
}

function parseFunding(input: unknown): FundingDetails | undefined {
  // JSON clients often send null for "not given"; only the ACH product sends funding details at all.
  if (input === undefined || input === null) return undefined;
  const parsed = parseFundingDetails(input);
  if (!parsed.ok) throw new ValidationError(parsed.errors);
  return parsed.value;
}

/** An ACH trace number: 15 digits, the form banks print on statements and match returns by. */
function newBankTransferId(): string {
  let digits = '';
  for (let i = 0; i < 15; i++) digits += String(randomInt(10));
  return digits;
}

/** A stored quote's assets and amounts, read once for the funding check and the trade. */
interface QuoteTerms {
  underlying: Asset;
  quoted: Asset;
  quantity: Money;
  total: Money;
}

function quoteTerms(quote: StoredQuote): QuoteTerms {
  const underlying = findAsset(quote.underlying);
  const quoted = findAsset(quote.quoted_currency);
  if (!underlying || !quoted) throw new Error(`quote ${quote.quote_id} names an asset missing from the registry`);
  return { underlying, quoted, quantity: new Money(quote.quantity), total: new Money(quote.total) };
}

/**
 * What the bank moves for an ACH-funded execution, once the funding is known to fit the quote: the trade
 * amount plus the fee for a buy, minus it for a sell, or the trade amount for an inbound reference.
 */
function achFundedAmount(quote: StoredQuote, terms: QuoteTerms, funding: FundingDetails): Money {
  const errors: string[] = [];
  if (terms.quoted.symbol !== ACH_ASSET)
    errors.push(`funding_details: ACH moves ${ACH_ASSET} only; this quote is in ${terms.quoted.symbol}`);
  // An inbound reference identifies money the platform sends us, which only a buy needs.
  if (funding.kind === 'inbound_reference' && quote.side !== 'buy')
    errors.push('funding_details.inbound_reference_id: only a buy is funded by an inbound ACH');
  if (errors.length > 0) throw new ValidationError(errors);
  return funding.kind === 'ach_debit_credit'
    ? achPaymentAmount(quote.side, terms.total, funding.bank_fee)
    : terms.total;
}

/** The quote's trade against the liquidity provider: its movement and its items, for the caller's booking. */
function quoteTradeExecution(
  ctx: AppContext,
  auth: AuthContext,
  quote: StoredQuote,
  terms: QuoteTerms,
  tradeId: string,
  funding: FundingDetails | undefined,
  clearing: PlatformAccount,
  nowMs: number,
): BookedExecution {
  const ownAccount = (asset: string): PlatformAccount => ({
    account: {
      participant_code: quote.participant_code,
      account_group: quote.account_group,
      account_label: quote.account_label,
      asset,
    },
    platform_code: quote.account_group,
  });
  return tradeExecutionItems(ctx, {
    tradeId,
    platformCode: auth.platformCode,
    ...quoteExecutionTerms(quote),
    side: quote.side,
    underlying: terms.underlying,
    quoted: terms.quoted,
    quantity: terms.quantity,
    total: terms.total,
    underlyingAccount: ownAccount(terms.underlying.symbol),
    // ACH-funded: the fiat leg is the platform's clearing account, not the participant's fiat balance.
    quotedAccount: funding ? clearing : ownAccount(terms.quoted.symbol),
    reporter: auth.platformCode,
    bankFee: funding?.kind === 'ach_debit_credit' ? funding.bank_fee : null,
    nowMs,
  });
}

/** The `submitted` ACH payment created with an ACH-funded execution, for the bank to move `amount`. */
function achPayment(
  auth: AuthContext,
  quote: StoredQuote,
  quoted: Asset,
  tradeId: string,
  funding: FundingDetails,
  amount: Money,
  clearing: PlatformAccount,
  nowMs: number,
): Payment {
  return {
    transaction_id: newId(),
    platform_code: auth.platformCode,
    trade_id: tradeId,
    participant_code: quote.participant_code,
    asset: quoted.symbol,
    amount: formatAmount(amount, quoted),
    trade_amount: quote.total,
    status: 'submitted',
    transfer_type: achTransferType(quote.side),
    bank_transfer_id: newBankTransferId(),
    funding: funding.kind,
    external_account_id: funding.kind === 'ach_debit_credit' ? funding.external_account_id : null,
    description: funding.kind === 'ach_debit_credit' ? funding.description : null,
    bank_fee: funding.kind === 'ach_debit_credit' ? funding.bank_fee.toFixed(2) : null,
    inbound_reference_id: funding.kind === 'inbound_reference' ? funding.inbound_reference_id : null,
    clearing_account: clearing.account,
    created_at_ms: nowMs,
    updated_at_ms: nowMs,
  };
}

/**
 * `POST /liquidity/execute`. One transaction: the quote goes from open to executed (the condition that lets
 * exactly one of any number of concurrent executions through), the 72-hour claim on the trade's
 * `client_trade_id` (= quote_id), the movement against the liquidity provider, the terminated/settled trade,
 * and for ACH funding the `submitted` payment. Anything failing leaves nothing written. `nowMs` is when the
 * request was received: the quote must be open then, and a second run of the request (its claims made apart)
 * judges the quote's expiry by the same time.
 */
export async function executeQuote(
  ctx: AppContext,
  auth: AuthContext,
  request: ExecuteRequest,
  claim: RequestClaim = NO_REQUEST_CLAIM,
  nowMs: number = ctx.clock.nowMs(),
): Promise<ExecutionResult> {
  const funding = parseFunding(request.funding_details);
  const quote = await executableQuote(ctx, auth.platformCode, request.quote_id, 'liquidity', nowMs);
  const terms = quoteTerms(quote);
  const clearing = achClearingAccount(
    { platform_code: auth.platformCode, participant_code: auth.participantCode },
    terms.quoted.symbol,
  );
  const paymentAmount = funding ? achFundedAmount(quote, terms, funding) : undefined;

  const tradeId = newId();
  const execution = quoteTradeExecution(ctx, auth, quote, terms, tradeId, funding, clearing, nowMs);
  const payment =
    funding && paymentAmount
      ? achPayment(auth, quote, terms.quoted, tradeId, funding, paymentAmount, clearing, nowMs)
      : undefined;

  const result: ExecutionResult = {
    request_id: quote.request_id,
    quote: quoteView(quote),
    trade_id: tradeId,
    trade_ids_list: [tradeId],
    status: 'Completed',
    payment_amount: payment?.amount ?? null,
  };
  await commitQuoteExecution(
    ctx,
    quote,
    tradeId,
    nowMs,
    execution.movement,
    [...execution.items, ...(payment ? [paymentCreationItem(ctx, payment)] : [])],
    claim(result),
  );
  recordTradesAccepted(ctx.metrics, 'quote_execution', 1, tradeId);
  if (payment) recordPaymentStatus(ctx.metrics, payment.status, payment.transaction_id);
  return result;
}
