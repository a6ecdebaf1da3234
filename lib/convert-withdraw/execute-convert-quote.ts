import { NO_REQUEST_CLAIM, type RequestClaim } from '../store/windows.js';
import { type Asset, findAsset } from '../domain/assets.js';
import type { AccountRef } from '../domain/ledger.js';
import { Money } from '../domain/money.js';
import { networkFeeAccount, withdrawalEscrowAccount, withdrawalExecutionLegs } from '../domain/withdrawals.js';
import type { AuthContext } from '../domain/caller.js';
import { recordTradesAccepted } from '../observability/metrics.js';
import { commitQuoteExecution, executableQuote } from '../liquidity/execute-quote.js';
import {
  type BookedExecution,
  liquidityProviderAccount,
  quoteExecutionTerms,
  tradeExecutionItems,
} from '../liquidity/trade-execution.js';
import type { QuoteWithdrawal, StoredQuote } from '../store/quotes.js';
import { newId } from '../store/codes.js';
import { withdrawalCreationItems } from '../store/withdrawals.js';
import { type Withdrawal } from '../domain/withdrawals.js';
import { convertQuoteView, type ConvertQuoteView } from './convert-quote-view.js';
import { CONVERT_WITHDRAW_PRODUCT } from './request-convert-quote.js';
import type { AppContext } from '../context.js';

interface ConvertExecutionResult {
  request_id: string;
  quote: ConvertQuoteView;
  trade_id: string;
  /** The reference API's list of the execution's trades; the first is `trade_id`. */
  trade_ids_list: string[];
  status: 'Completed';
  withdrawal_request_id: string;
}

/** An account of the quote's participant, held under its platform. */
type OwnAccount = { account: AccountRef; platform_code: string };

/** Whose accounts a convert-withdraw moves between, and the assets they hold. */
interface ConvertAccounts {
  underlying: Asset;
  /** The underlying's network, where the withdrawal goes. */
  network: string;
  quoted: Asset;
  /** The participant's underlying account: receives the bought quantity, which moves on into escrow. */
  source: OwnAccount;
  /** The participant's quoted-currency account, which pays `total_notional`. */
  payer: OwnAccount;
  escrow: AccountRef;
  feeAccount: AccountRef;
}

function convertAccounts(auth: AuthContext, quote: StoredQuote): ConvertAccounts {
  const underlying = findAsset(quote.underlying);
  const quoted = findAsset(quote.quoted_currency);
  if (!underlying?.network || !quoted)
    throw new Error(`quote ${quote.quote_id} names an asset missing from the registry or without a network`);
  const account = (asset: string): OwnAccount => ({
    account: {
      participant_code: quote.participant_code,
      account_group: quote.account_group,
      account_label: quote.account_label,
      asset,
    },
    platform_code: quote.account_group,
  });
  return {
    underlying,
    network: underlying.network,
    quoted,
    source: account(underlying.symbol),
    payer: account(quoted.symbol),
    escrow: withdrawalEscrowAccount(auth.platformCode, underlying.symbol),
    feeAccount: networkFeeAccount(underlying.symbol),
  };
}

/**
 * The buy against the liquidity provider, with the network fee bought on top and paid to the fee account and
 * the bought quantity moved into escrow, as one movement.
 */
function convertTradeExecution(
  ctx: AppContext,
  auth: AuthContext,
  quote: StoredQuote,
  terms: QuoteWithdrawal,
  accounts: ConvertAccounts,
  tradeId: string,
  nowMs: number,
): BookedExecution {
  const { underlying, quoted, source, payer, escrow, feeAccount } = accounts;
  const quantity = new Money(quote.quantity);
  const networkFeeQuantity = new Money(terms.network_fee_quantity);
  return tradeExecutionItems(ctx, {
    tradeId,
    platformCode: auth.platformCode,
    ...quoteExecutionTerms(quote),
    side: 'buy',
    underlying,
    quoted,
    quantity,
    total: new Money(quote.total),
    underlyingAccount: source,
    quotedAccount: payer,
    reporter: auth.platformCode,
    movementType: 'withdrawal',
    extraLegs: withdrawalExecutionLegs(
      { source, escrow, feeAccount, quantity, networkFeeQuantity },
      {
        payer,
        provider: {
          underlying: liquidityProviderAccount(underlying.symbol).account,
          quoted: liquidityProviderAccount(quoted.symbol).account,
        },
        networkFeeNotional: new Money(terms.network_fee_notional),
      },
    ),
    nowMs,
  });
}

/** The `PENDING` withdrawal request created with the execution, holding the bought quantity in escrow. */
function pendingWithdrawal(
  auth: AuthContext,
  quote: StoredQuote,
  terms: QuoteWithdrawal,
  accounts: ConvertAccounts,
  tradeId: string,
  nowMs: number,
): Withdrawal {
  return {
    withdrawal_request_id: newId(),
    platform_code: auth.platformCode,
    participant_code: quote.participant_code,
    account_group: quote.account_group,
    account_label: quote.account_label,
    asset: accounts.underlying.symbol,
    network: accounts.network,
    address: terms.address,
    requested_amount: quote.quantity,
    fee_amount: terms.network_fee_quantity,
    fee_notional: terms.network_fee_notional,
    quoted_currency: accounts.quoted.symbol,
    trade_id: tradeId,
    quote_id: quote.quote_id,
    status: 'PENDING',
    transaction_hash: null,
    source_account: accounts.source.account,
    escrow_account: accounts.escrow,
    fee_account: accounts.feeAccount,
    created_at: nowMs,
    updated_at: nowMs,
  };
}

/**
 * `POST /convert_withdraw/execute`: executes a convert-withdraw quote once, with the rules of liquidity
 * execution (only the platform's own open quotes; executed is reported before expired; the quote's
 * open -> executed condition lets exactly one of any number of concurrent executions through). One
 * transaction books the trade against the liquidity provider, the network fee bought on top and paid to the
 * fee account, the bought quantity moved into the withdrawal's escrow, and the `PENDING` withdrawal request.
 * The participant's quoted-currency account pays `total_notional` and never goes negative.
 */
export async function executeConvertQuote(
  ctx: AppContext,
  auth: AuthContext,
  quoteId: string,
  claim: RequestClaim = NO_REQUEST_CLAIM,
  nowMs: number = ctx.clock.nowMs(),
): Promise<ConvertExecutionResult> {
  const quote = await executableQuote(ctx, auth.platformCode, quoteId, CONVERT_WITHDRAW_PRODUCT, nowMs);
  const terms = quote.withdrawal;
  if (!terms) throw new Error(`convert-withdraw quote ${quoteId} has no withdrawal details`);
  const accounts = convertAccounts(auth, quote);

  const tradeId = newId();
  const execution = convertTradeExecution(ctx, auth, quote, terms, accounts, tradeId, nowMs);
  const withdrawal = pendingWithdrawal(auth, quote, terms, accounts, tradeId, nowMs);

  const result: ConvertExecutionResult = {
    request_id: quote.request_id,
    quote: convertQuoteView(quote),
    trade_id: tradeId,
    trade_ids_list: [tradeId],
    status: 'Completed',
    withdrawal_request_id: withdrawal.withdrawal_request_id,
  };
  await commitQuoteExecution(
    ctx,
    quote,
    tradeId,
    nowMs,
    execution.movement,
    [...withdrawalCreationItems(ctx, withdrawal), ...execution.items],
    claim(result),
  );
  recordTradesAccepted(ctx.metrics, 'convert_withdraw', 1, tradeId);
  return result;
}
