import { listEnvelope } from '../domain/list-envelope.js';
import { pageOfWithdrawals } from '../store/withdrawals.js';
import { withdrawalView } from '../domain/withdrawals.js';
import type { AppContext } from '../context.js';

interface WithdrawalFilters {
  participant_code?: string;
  asset?: string;
  /** Upper case, as the reference API's filter values are. */
  status?: 'PENDING' | 'CONFIRMED' | 'FAILED';
  page: number;
  page_size: number;
  cursor?: string;
}

/** `GET /withdrawals/requests`: the platform's withdrawal requests, newest first (as the reference sorts them). */
export async function listWithdrawals(ctx: AppContext, platformCode: string, filters: WithdrawalFilters) {
  const { page, page_size, cursor, ...bindingFilters } = filters;
  const found = await pageOfWithdrawals(ctx, platformCode, bindingFilters, { page, pageSize: page_size, cursor });
  return listEnvelope(found.items.map(withdrawalView), {
    page: found.page,
    pageSize: page_size,
    count: found.count,
    nextCursor: found.nextCursor,
  });
}
