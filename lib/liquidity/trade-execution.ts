import type { Asset } from '../domain/assets.js';
import {
  moveLegs,
  SYSTEM_PARTICIPANTS,
  systemAccount,
  type Leg,
  type Movement,
  type MovementType,
} from '../domain/ledger.js';
import { formatAmount, Money } from '../domain/money.js';
import type { QuoteSide } from '../domain/quotes.js';
import type { AmountMethod, TradeReport, TradeReportParty } from '../domain/trade-report.js';
import type { PlatformAccount } from '../domain/ach-clearing.js';
import { newId } from '../store/codes.js';
import { clientTradeIdClaim, tradeItems } from '../store/trades.js';
import { settledTrade, type Trade } from '../domain/trade.js';
import type { StoredQuote } from '../store/quotes.js';
import { spreadNotional } from './quote-view.js';
import type { TaggedItem } from '../store/table/transaction-items.js';
import type { AppContext } from '../context.js';

/** The group of the liquidity provider's accounts (one per asset; they may go negative, see ledger.ts). */
const LIQUIDITY_PROVIDER_GROUP = 'liquidity';

export function liquidityProviderAccount(asset: string): PlatformAccount {
  return {
    account: systemAccount(SYSTEM_PARTICIPANTS.liquidityProvider, LIQUIDITY_PROVIDER_GROUP, asset),
    platform_code: null,
  };
}

/**
 * A trade against the liquidity provider that settles the moment it is booked: an executed quote, and the
 * same shape for rewards, awards and convert-withdraw. Each of those decides whose accounts pay and receive;
 * this builds the balanced movement and the terminated/settled trade record for one transaction.
 */
interface TradeExecution {
  tradeId: string;
  platformCode: string;
  /** Saved as the trade's `client_trade_id` (a quote's `quote_id`). */
  clientTradeId: string;
  /** The participant's side: `buy` receives the underlying and pays the quoted currency. */
  side: QuoteSide;
  underlying: Asset;
  quoted: Asset;
  quantity: Money;
  total: Money;
  price: Money;
  /** The party named in the trade: who benefits from it. */
  participant: { participant_code: string; platform_code: string; account_label: string };
  /** Receives (buy) or gives (sell) the underlying. */
  underlyingAccount: PlatformAccount;
  /** Gives (buy) or receives (sell) the quoted currency: the participant's own, the platform's, an ACH clearing account... */
  quotedAccount: PlatformAccount;
  /** How the amounts were given: `quantity` (price_and_quantity) or `total` (amounts_per_party). */
  amountMethod: AmountMethod;
  /** `trade_reporter` of the trade: who booked it. */
  reporter: string;
  bankFee?: Money | null;
  /** The executed quote's spread, kept on the trade (`quoteExecutionTerms`). */
  spread?: { notional: string; bps: string };
  movementType?: MovementType;
  /** Claim `client_trade_id` for 72 hours (default), so a reported trade can't reuse it in that window. */
  claimClientTradeId?: boolean;
  /**
   * Legs booked in the same movement as the trade (e.g. a convert-withdraw's network fee and the move of the
   * bought quantity into a withdrawal's escrow). One movement, because a transaction may touch each account
   * item once and these legs share accounts with the trade's; they are netted per account with it.
   */
  extraLegs?: readonly Leg[];
  nowMs: number;
}

/**
 * What executing a stored quote takes from the quote itself, the same for every product that executes one:
 * its id as the trade's `client_trade_id`, its price, the participant it was quoted for, and how its amounts
 * were fixed (by quantity or by total).
 */
export function quoteExecutionTerms(
  quote: StoredQuote,
): Pick<TradeExecution, 'clientTradeId' | 'price' | 'participant' | 'amountMethod' | 'spread'> {
  return {
    clientTradeId: quote.quote_id,
    // The spread as the quote showed it (`quoteView`), so the trade and its quote agree.
    spread: { notional: spreadNotional(quote), bps: quote.spread_bps },
    price: new Money(quote.price),
    participant: {
      participant_code: quote.participant_code,
      platform_code: quote.account_group,
      account_label: quote.account_label,
    },
    amountMethod: quote.quoted_by === 'quantity' ? 'price_and_quantity' : 'amounts_per_party',
  };
}

export interface BookedExecution {
  trade: Trade;
  movement: Movement;
  /**
   * For the caller's booking of `movement`, after its own state condition (e.g. the quote still open): the
   * client id claim and the trade.
   */
  items: TaggedItem[];
}

/** The balanced movement: the participant's side against the liquidity provider, plus any extra legs. */
function executionMovement(execution: TradeExecution): Movement {
  const { side, underlying, quoted, quantity, total } = execution;
  const providerUnderlying = liquidityProviderAccount(underlying.symbol);
  const providerQuoted = liquidityProviderAccount(quoted.symbol);
  const legs: Leg[] =
    side === 'buy'
      ? [
          ...moveLegs(providerUnderlying, execution.underlyingAccount, quantity),
          ...moveLegs(execution.quotedAccount, providerQuoted, total),
        ]
      : [
          ...moveLegs(execution.underlyingAccount, providerUnderlying, quantity),
          ...moveLegs(providerQuoted, execution.quotedAccount, total),
        ];
  legs.push(...(execution.extraLegs ?? []));
  return {
    movement_id: newId(),
    type: execution.movementType ?? 'trade',
    reference: `trade:${execution.tradeId}`,
    legs,
  };
}

/** The trade as reported: the participant on its side, the liquidity provider on the other. */
function executionReport(execution: TradeExecution): TradeReport {
  const { side, underlying, quoted, quantity, total, nowMs } = execution;
  const quantityText = formatAmount(quantity, underlying);
  const totalText = formatAmount(total, quoted);
  const party = (partySide: QuoteSide, participantCode: string, accountLabel: string): TradeReportParty => ({
    side: partySide,
    participant_code: participantCode,
    // Each party's asset and amount are what it receives: the buyer the underlying, the seller the quote.
    asset: partySide === 'buy' ? underlying.symbol : quoted.symbol,
    amount: partySide === 'buy' ? quantityText : totalText,
    settling: true,
    account_label: accountLabel,
    liquidity_indicator: null,
    client_order_id: null,
    order_id: null,
    execution_id: null,
  });
  const counterSide: QuoteSide = side === 'buy' ? 'sell' : 'buy';
  return {
    client_trade_id: execution.clientTradeId,
    // No order book session (shown as null).
    session_id: '',
    ...(execution.spread && { spread_notional: execution.spread.notional, spread_bps: execution.spread.bps }),
    trade_reporter: execution.reporter,
    reporting_party: null,
    settlement_schedule: null,
    platform_code: execution.platformCode,
    market_identifier_code: null,
    symbol: `${underlying.symbol}/${quoted.symbol}`,
    product_type: 'spot',
    trade_type: 'regular',
    trade_price: execution.price.toFixed(),
    trade_quantity: quantityText,
    amount_method: execution.amountMethod,
    physical_delivery: true,
    transaction_timestamp: nowMs,
    comment: null,
    parties_anonymous: false,
    settlement_price_index_id: null,
    settlement_timestamp: null,
    expiry_timestamp: null,
    // A bank fee has 2 decimals whatever the currency (the spec's trade rule for bank_fee).
    bank_fee: execution.bankFee ? execution.bankFee.toFixed(2) : null,
    contract_size: 1,
    underlying: underlying.symbol,
    quoted_currency: quoted.symbol,
    parties: [
      party(side, execution.participant.participant_code, execution.participant.account_label),
      party(counterSide, SYSTEM_PARTICIPANTS.liquidityProvider, 'general'),
    ],
  };
}

export function tradeExecutionItems(ctx: AppContext, execution: TradeExecution): BookedExecution {
  const { nowMs } = execution;
  const movement = executionMovement(execution);
  // The liquidity provider belongs to no platform, so only the participant's platform sees the trade.
  const trade = settledTrade(executionReport(execution), {
    tradeId: execution.tradeId,
    nowMs,
    accountGroups: [execution.participant.platform_code, null],
  });

  const claim = execution.claimClientTradeId === false ? [] : [clientTradeIdClaim(ctx, trade, nowMs)];
  return { trade, movement, items: [...claim, ...tradeItems(ctx, trade)] };
}
