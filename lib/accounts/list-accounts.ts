import { paginate } from '../http/pagination.js';
import { findAsset } from '../domain/assets.js';
import { formatAmount } from '../domain/money.js';
import { accountsOfPlatform } from '../store/ledger.js';

export interface AccountFilters {
  account_owner?: string;
  account_group?: string;
  account_label?: string;
  asset?: string;
  page: number;
  page_size: number;
}

/** The platform's accounts and its customers' accounts, in the reference API's account shape. */
export async function listAccounts(platformCode: string, filters: AccountFilters) {
  const accounts = await accountsOfPlatform(platformCode);
  const matching = accounts.filter(
    (account) =>
      (filters.account_owner === undefined || account.participant_code === filters.account_owner) &&
      (filters.account_group === undefined || account.account_group === filters.account_group) &&
      (filters.account_label === undefined || account.account_label === filters.account_label) &&
      (filters.asset === undefined || account.asset === filters.asset),
  );
  return paginate(
    matching.map((account) => ({
      asset: account.asset,
      account_owner: account.participant_code,
      account_type: 'available',
      account_group: account.account_group,
      account_label: account.account_label,
      balance: formatAmount(account.balance, findAsset(account.asset)!),
      account_id: account.account_id,
      last_update: account.last_update,
    })),
    filters.page,
    filters.page_size,
  );
}
