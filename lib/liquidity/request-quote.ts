import { findAsset, type Asset } from '../domain/assets.js';
import { ValidationError } from '../domain/errors.js';
import { ACTIVE_STATUS, participantNotActive } from '../domain/participant-status.js';
import { parseAmount, type Money } from '../domain/money.js';
import { computeQuote, validateQuantityXorTotal, type QuoteSide } from '../domain/quotes.js';
import type { AuthContext } from '../domain/caller.js';
import { dealPriceFor } from '../pricing/price-source.js';
import { getParticipantOfPlatform, type Participant } from '../store/participants.js';
import { putQuote, quoteCreationItem } from '../store/quotes.js';
import { transactWrite } from '../store/table/transactions.js';
import { NO_REQUEST_CLAIM, type RequestClaim } from '../store/windows.js';
import { quoteView, type QuoteView } from './quote-view.js';
import { openQuote } from './open-quote.js';
import type { AppContext } from '../context.js';

export interface QuoteRequest {
  side: string;
  underlying: string;
  quoted_currency: string;
  quantity?: string;
  total?: string;
  participant_code?: string;
  account_label?: string;
}

export interface ValidQuoteRequest {
  side: QuoteSide;
  underlying: Asset;
  quoted: Asset;
  quantity?: Money;
  total?: Money;
}

/**
 * The pricing inputs every quoting product shares (liquidity RFQ, rewards, awards, convert-withdraw), with
 * every problem reported at once. `allowedSides` lets a buy-only product refuse `sell` in the same list.
 */
export function validateQuoteRequest(
  request: Pick<QuoteRequest, 'side' | 'underlying' | 'quoted_currency' | 'quantity' | 'total'>,
  options: { allowedSides?: readonly QuoteSide[] } = {},
): { errors: string[]; value?: ValidQuoteRequest } {
  const errors: string[] = [];
  const allowed = options.allowedSides ?? ['buy', 'sell'];
  // The spec's sample sends `BUY`; the reference API's enum is lower case. Both mean the same side.
  const side = request.side.toLowerCase() as QuoteSide;
  if (!allowed.includes(side)) errors.push(`side: must be ${allowed.join(' or ')}`);

  const underlying = findAsset(request.underlying);
  if (!underlying) errors.push(`underlying: unknown asset '${request.underlying}'`);
  else if (underlying.type !== 'crypto') errors.push(`underlying: ${underlying.symbol} is not a crypto asset`);
  const quoted = findAsset(request.quoted_currency);
  if (!quoted) errors.push(`quoted_currency: unknown asset '${request.quoted_currency}'`);
  else if (quoted.type !== 'fiat') errors.push(`quoted_currency: ${quoted.symbol} is not a fiat currency`);

  errors.push(...validateQuantityXorTotal(request));
  let quantity: Money | undefined;
  let total: Money | undefined;
  if (request.quantity !== undefined && underlying) {
    const parsed = parseAmount(request.quantity, underlying, 'quantity');
    if (typeof parsed === 'string') errors.push(parsed);
    else quantity = parsed;
  }
  if (request.total !== undefined && quoted) {
    const parsed = parseAmount(request.total, quoted, 'total');
    if (typeof parsed === 'string') errors.push(parsed);
    else total = parsed;
  }
  if (errors.length > 0 || !underlying || !quoted) return { errors };
  return { errors, value: { side, underlying, quoted, quantity, total } };
}

/**
 * Whose accounts a platform's request trades: the platform itself when no code is given, else the platform
 * or one of its approved customers. Another platform's participant reads like an unknown one.
 */
export async function tradingParticipant(
  ctx: AppContext,
  auth: AuthContext,
  participantCode: string | undefined,
  errors: string[],
): Promise<Participant | undefined> {
  const code = participantCode ?? auth.participantCode;
  const participant = await getParticipantOfPlatform(ctx, auth.platformCode, code);
  if (!participant) errors.push(`participant_code: no participant '${code}' of this platform`);
  else if (participant.status !== ACTIVE_STATUS)
    errors.push(participantNotActive('participant_code', code, participant.status));
  return participant?.status === ACTIVE_STATUS ? participant : undefined;
}

/**
 * `GET /liquidity/rfq`: prices a trade for the platform or one of its customers and stores the quote for
 * QUOTE_TTL_SECONDS. Balances are not checked here, only at execution (as in the reference API).
 */
export async function requestQuote(
  ctx: AppContext,
  auth: AuthContext,
  request: QuoteRequest,
  requestId: string,
  claim: RequestClaim = NO_REQUEST_CLAIM,
): Promise<QuoteView> {
  const { errors, value } = validateQuoteRequest(request);
  const nowMs = ctx.clock.nowMs();
  // The price reads don't depend on the participant, so they run alongside its read; a 400 for the
  // request still wins over a 503 for the price.
  const pricing = value
    ? dealPriceFor(ctx, {
        platformCode: auth.platformCode,
        side: value.side,
        underlying: value.underlying,
        quoted: value.quoted,
        nowMs,
      })
    : undefined;
  const participant = await tradingParticipant(ctx, auth, request.participant_code, errors);
  if (errors.length > 0 || !value || !participant || !pricing) throw new ValidationError(errors);
  const priced = await pricing;
  if ('error' in priced) throw priced.error;
  const { deal } = priced;
  const amounts = computeQuote({ ...value, price: deal.price });
  const quote = openQuote(ctx, {
    product: 'liquidity',
    requestId,
    platformCode: auth.platformCode,
    platformParticipantCode: auth.participantCode,
    participant,
    accountLabel: request.account_label,
    side: value.side,
    underlying: value.underlying,
    quoted: value.quoted,
    amounts,
    deal,
    quotedBy: value.quantity !== undefined ? 'quantity' : 'total',
    nowMs,
  });
  const view = quoteView(quote);
  // POST /liquidity/rfq with X-Request-Id: the quote and its answer are stored together (see `RequestClaim`).
  const claimed = claim(view);
  if (claimed.length > 0) await transactWrite(ctx, [...claimed, quoteCreationItem(ctx, quote)]);
  else await putQuote(ctx, quote);
  return view;
}
