import { moveLegs, SYSTEM_PARTICIPANTS, systemAccount, type AccountRef, type Leg } from './ledger.js';
import type { Money } from './money.js';

/**
 * On-chain withdrawals (convert-and-withdraw). Two-phase, like a pending transfer: executing the quote moves
 * the bought quantity out of the participant's reach into escrow and pays the network fee to the fee
 * account; custody then reports the outcome.
 *
 *   execute    participant --quantity--> escrow (withdrawals)    liquidity provider --fee--> fees
 *   CONFIRMED  escrow --quantity--> external boundary             (the coins left on chain)
 *   FAILED     escrow --quantity--> participant, fees --fee--> participant   (the exact reverse; nothing left)
 *
 * The fee is bought from the liquidity provider with the rest of the purchase (the participant pays its
 * notional in the quoted currency), so on FAILED the participant gets the underlying it paid for, fee
 * included, back into the account it paid from.
 */
export type WithdrawalStatus = 'PENDING' | 'CONFIRMED' | 'FAILED';

/** Custody's outcomes; PENDING is where a request starts, never an event. */
export type CustodyOutcome = Exclude<WithdrawalStatus, 'PENDING'>;

/** The `sequence` of a withdrawal's withdrawal.status_changed event: created PENDING (1), then its one outcome (2). */
export function withdrawalStatusSequence(status: WithdrawalStatus): number {
  return status === 'PENDING' ? 1 : 2;
}

type CustodyDecision =
  | { kind: 'apply'; next: CustodyOutcome }
  | { kind: 'noop' }
  | { kind: 'illegal'; message: string };

/**
 * What a custody event does to a request in `current`. Custody redelivers, so reaching the current status
 * again is a no-op; a request has exactly one outcome, so the other terminal status is refused.
 */
export function decideCustodyEvent(
  current: WithdrawalStatus,
  event: { status: string; transaction_hash?: string | null },
): CustodyDecision {
  if (event.status !== 'CONFIRMED' && event.status !== 'FAILED') {
    return { kind: 'illegal', message: `status: must be CONFIRMED or FAILED, got '${event.status}'` };
  }
  if (event.status === current) return { kind: 'noop' };
  if (current !== 'PENDING')
    return {
      kind: 'illegal',
      message: `status: the withdrawal is already ${current}; it can't become ${event.status}`,
    };
  if (event.status === 'CONFIRMED' && !event.transaction_hash)
    return { kind: 'illegal', message: 'transaction_hash: required to confirm a withdrawal' };
  return { kind: 'apply', next: event.status };
}

/** Where a platform's withdrawals wait for custody: per platform and asset. */
export function withdrawalEscrowAccount(platformCode: string, asset: string): AccountRef {
  return {
    participant_code: SYSTEM_PARTICIPANTS.escrow,
    account_group: platformCode,
    account_label: 'withdrawals',
    asset,
  };
}

/** Network fees collected, per asset; the service pays the chain from here. */
export function networkFeeAccount(asset: string): AccountRef {
  return systemAccount(SYSTEM_PARTICIPANTS.fees, 'network_fees', asset);
}

/** Coins that have left on chain. */
export function onChainBoundaryAccount(asset: string): AccountRef {
  return systemAccount(SYSTEM_PARTICIPANTS.externalBoundary, 'withdrawals', asset);
}

interface WithdrawalAmounts {
  /** The participant's account the quantity comes from (and returns to on FAILED). */
  source: { account: AccountRef; platform_code: string };
  escrow: AccountRef;
  feeAccount: AccountRef;
  quantity: Money;
  networkFeeQuantity: Money;
}

const system = (account: AccountRef) => ({ account, platform_code: null });

interface NetworkFeePurchase {
  /** The participant's quoted-currency account, which pays the fee's notional. */
  payer: { account: AccountRef; platform_code: string };
  /** The liquidity provider's accounts: it sells the fee's quantity for the notional, as it sells the rest. */
  provider: { underlying: AccountRef; quoted: AccountRef };
  networkFeeNotional: Money;
}

/**
 * What a convert-withdraw execution books besides the trade itself: the fee bought on top of the trade and
 * delivered to the fee account, and the traded quantity moved from the participant into escrow. Zero fees
 * book no legs (a leg of zero is not a movement).
 */
export function withdrawalExecutionLegs(withdrawal: WithdrawalAmounts, fee: NetworkFeePurchase): Leg[] {
  // Each asset balances on its own, so a fee whose notional rounds to zero still reaches the fee account.
  return [
    ...(fee.networkFeeNotional.isZero()
      ? []
      : moveLegs(fee.payer, system(fee.provider.quoted), fee.networkFeeNotional)),
    ...(withdrawal.networkFeeQuantity.isZero()
      ? []
      : moveLegs(system(fee.provider.underlying), system(withdrawal.feeAccount), withdrawal.networkFeeQuantity)),
    ...moveLegs(withdrawal.source, system(withdrawal.escrow), withdrawal.quantity),
  ];
}

/** The movement a custody outcome books. */
export function custodyOutcomeLegs(withdrawal: WithdrawalAmounts & { asset: string }, outcome: CustodyOutcome): Leg[] {
  if (outcome === 'CONFIRMED')
    return moveLegs(system(withdrawal.escrow), system(onChainBoundaryAccount(withdrawal.asset)), withdrawal.quantity);
  return [
    ...moveLegs(system(withdrawal.escrow), withdrawal.source, withdrawal.quantity),
    ...(withdrawal.networkFeeQuantity.isZero()
      ? []
      : moveLegs(system(withdrawal.feeAccount), withdrawal.source, withdrawal.networkFeeQuantity)),
  ];
}

/**
 * A withdrawal request: created `PENDING` in the transaction that executes its convert-withdraw quote, moved
 * once to `CONFIRMED` or `FAILED` by custody. Amounts are fixed-point text with the asset's decimals. The
 * accounts the execution booked against are stored with it, so the custody outcome books against exactly
 * those, whatever the rules are by then.
 */
export interface Withdrawal {
  withdrawal_request_id: string;
  platform_code: string;
  participant_code: string;
  account_group: string;
  account_label: string;
  asset: string;
  network: string;
  address: string;
  /** What leaves on chain. */
  requested_amount: string;
  /** The network fee in the asset, paid to `fee_account` at execution. */
  fee_amount: string;
  /** The fee's price in `quoted_currency`, as quoted. */
  fee_notional: string;
  quoted_currency: string;
  trade_id: string;
  quote_id: string;
  status: WithdrawalStatus;
  /** Set by the CONFIRMED event: the chain transaction. */
  transaction_hash: string | null;
  source_account: AccountRef;
  escrow_account: AccountRef;
  fee_account: AccountRef;
  created_at: number;
  updated_at: number;
}

/**
 * A withdrawal request as clients see it: the reference API's withdrawal request fields,
 * every one present, null where this service has no value (approvals, gas, UMA, fiat), plus the address,
 * network and quote it came from. `status` is this service's (PENDING until custody answers, then CONFIRMED
 * or FAILED); `on_chain_status` tells the chain's side the reference way.
 */
export function withdrawalView(withdrawal: Withdrawal) {
  return {
    id: withdrawal.withdrawal_request_id,
    withdrawal_account_id: null,
    participant_code: withdrawal.participant_code,
    beneficiary_participant_code: null,
    sender_participant_code: null,
    requestor_participant_code: withdrawal.participant_code,
    requested_amount: withdrawal.requested_amount,
    // What left on chain: known once custody confirms it.
    settled_amount: withdrawal.status === 'CONFIRMED' ? withdrawal.requested_amount : null,
    status: withdrawal.status,
    on_chain_status: withdrawal.status === 'FAILED' ? null : withdrawal.status,
    asset: withdrawal.asset,
    network: withdrawal.network,
    withdrawal_address: withdrawal.address,
    account_group: withdrawal.account_group,
    account_label: withdrawal.account_label,
    transaction_id: withdrawal.transaction_hash,
    input_data: null,
    requested_timestamp: withdrawal.updated_at,
    created_timestamp: new Date(withdrawal.created_at).toISOString(),
    gas_price: null,
    client_withdrawal_request_id: null,
    fee_amount: withdrawal.fee_amount,
    withdrawal_fee: null,
    quoted_fee_amount: withdrawal.fee_amount,
    quoted_fee_notional: withdrawal.fee_notional,
    quoted_fee_asset: withdrawal.asset,
    quoted_currency: withdrawal.quoted_currency,
    trade_id: withdrawal.trade_id,
    quote_id: withdrawal.quote_id,
    parent_link_id: null,
    parent_link_id_source: null,
    amount_in_usd: null,
    contract_validation_id: null,
    recipient_instructions: null,
  };
}
