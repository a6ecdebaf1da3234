import type { Withdrawal } from '../store/withdrawals.js';

/**
 * A withdrawal request as clients see it: the reference API's withdrawal request fields (anchor-api.md 4.4),
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
