import { NotFoundError } from '../domain/errors.js';
import { paginate } from '../http/pagination.js';
import { getTransfer, transfersOfPlatform, type Transfer } from '../store/transfers.js';

export interface TransferFilters {
  client_transfer_id?: string;
  from_participant_code?: string;
  to_participant_code?: string;
  from_account_group?: string;
  to_account_group?: string;
  from_account_label?: string;
  to_account_label?: string;
  asset?: string;
  page: number;
  page_size: number;
}

const FILTERED_FIELDS = [
  'client_transfer_id',
  'from_participant_code',
  'to_participant_code',
  'from_account_group',
  'to_account_group',
  'from_account_label',
  'to_account_label',
  'asset',
] as const;

export async function listTransfers(platformCode: string, filters: TransferFilters) {
  const transfers = await transfersOfPlatform(platformCode);
  const matching = transfers.filter((transfer) =>
    FILTERED_FIELDS.every((field) => filters[field] === undefined || transfer[field] === filters[field]),
  );
  return paginate(matching.map(publicTransfer), filters.page, filters.page_size);
}

/** A platform sees only its own transfers; anyone else's id is simply not found. */
export async function findTransfer(platformCode: string, id: string) {
  const transfer = /^\d{1,17}$/.test(id) ? await getTransfer(id) : undefined;
  if (!transfer || transfer.platform_code !== platformCode) throw new NotFoundError(`transfer not found: ${id}`);
  return { message: publicTransfer(transfer) };
}

/** The transfer as clients see it (the owning platform is implied by who asks). */
export function publicTransfer(transfer: Transfer) {
  const { platform_code: _platform, ...rest } = transfer;
  return rest;
}
