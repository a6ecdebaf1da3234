import { listEnvelope } from '../http/pagination.js';
import { findAsset } from '../domain/assets.js';
import { formatAmount } from '../domain/money.js';
import { pageOfAccounts } from '../store/ledger.js';

export interface AccountFilters {
  account_owner?: string;
  account_group?: string;
  account_label?: string;
  asset?: string;
  page: number;
  page_size: number;
  cursor?: string;
}

/** `GET /accounts`: one page of the platform's and its customers' accounts, in the reference API's shape. */
export async function listAccounts(platformCode: string, filters: AccountFilters) {
  const found = await pageOfAccounts(
    platformCode,
    { participant_code: filters.account_owner, account_group: filters.account_group, account_label: filters.account_label, asset: filters.asset },
    { page: filters.page, pageSize: filters.page_size, cursor: filters.cursor },
  );
  return listEnvelope(
    found.items.map((account) => ({
      asset: account.asset,
      account_owner: account.participant_code,
      account_type: 'available',
      account_group: account.account_group,
      account_label: account.account_label,
      balance: formatAmount(account.balance, findAsset(account.asset)!),
      account_id: account.account_id,
      last_update: account.last_update,
    })),
    { page: found.page, pageSize: filters.page_size, count: found.count, nextCursor: found.nextCursor },
  );
}
