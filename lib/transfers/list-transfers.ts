import { NotFoundError } from '../domain/errors.js';
import { listEnvelope } from '../domain/list-envelope.js';
import { getTransfer, pageOfTransfers, type Transfer, type TransferListFilters } from '../store/transfers.js';
import type { AppContext } from '../context.js';

interface TransferFilters extends TransferListFilters {
  page: number;
  page_size: number;
  cursor?: string;
}

/** `GET /transfers`: one page of the platform's transfers, newest first, exact matches on every filter. */
export async function listTransfers(ctx: AppContext, platformCode: string, query: TransferFilters) {
  const { page, page_size, cursor, ...filters } = query;
  const found = await pageOfTransfers(ctx, platformCode, filters, { page, pageSize: page_size, cursor });
  return listEnvelope(found.items.map(publicTransfer), {
    page: found.page,
    pageSize: page_size,
    count: found.count,
    nextCursor: found.nextCursor,
  });
}

/**
 * A platform sees the transfers it booked and those out of its participants booked under a grant; anyone
 * else's id is simply not found.
 */
export async function findTransfer(ctx: AppContext, platformCode: string, id: string) {
  const transfer = /^\d{1,17}$/.test(id) ? await getTransfer(ctx, id, platformCode) : undefined;
  if (!transfer || transfer.platform_code !== platformCode) throw new NotFoundError(`transfer not found: ${id}`);
  return { message: publicTransfer(transfer) };
}

/** The transfer as clients see it (the owning platform is implied by who asks). */
export function publicTransfer(transfer: Transfer) {
  const { platform_code: _platform, ...rest } = transfer;
  return rest;
}
