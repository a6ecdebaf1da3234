import { findAsset } from '../domain/assets.js';
import { formatAmount } from '../domain/money.js';
import type { Account } from '../store/ledger.js';

/** An account as clients see it: the reference API's account shape (`AccountsResponseEntity`). */
export function accountView(account: Account) {
  return {
    asset: account.asset,
    account_owner: account.participant_code,
    account_type: 'available',
    account_group: account.account_group,
    account_label: account.account_label,
    balance: formatAmount(account.balance, findAsset(account.asset)!),
    account_id: account.account_id,
    last_update: account.last_update,
  };
}
