import { ValidationError } from '../domain/errors.js';
import { accountGroupProblem } from '../domain/ledger.js';
import { listEnvelope } from '../domain/list-envelope.js';
import { pageOfAccounts } from '../store/ledger.js';
import { accountView } from './account-view.js';
import type { AppContext } from '../context.js';

interface AccountFilters {
  account_owner?: string;
  account_group?: string;
  account_label?: string;
  asset?: string;
  page: number;
  page_size: number;
  cursor?: string;
}

/** `GET /accounts`: one page of the platform's and its customers' accounts, in the reference API's shape. */
export async function listAccounts(ctx: AppContext, platformCode: string, filters: AccountFilters) {
  const groupProblem =
    filters.account_group === undefined ? undefined : accountGroupProblem('account_group', filters.account_group);
  if (groupProblem) throw new ValidationError([groupProblem]);
  const found = await pageOfAccounts(
    ctx,
    platformCode,
    {
      participant_code: filters.account_owner,
      account_group: filters.account_group,
      account_label: filters.account_label,
      asset: filters.asset,
    },
    { page: filters.page, pageSize: filters.page_size, cursor: filters.cursor },
  );
  return listEnvelope(found.items.map(accountView), {
    page: found.page,
    pageSize: filters.page_size,
    count: found.count,
    nextCursor: found.nextCursor,
  });
}
