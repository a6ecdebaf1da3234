import { equalityFilter, pageWithCount, type PageRequest } from './table/paging.js';
import { transferEntity, transferViewEntity, type Transfer } from './entities/transfer.js';
import { ALL, readCount } from './table/counters.js';
import { batchGetItems } from './table/batch-get.js';
import type { TaggedItem } from './table/transaction-items.js';
import type { AppContext } from '../context.js';

const TRANSFERS_LIST = 'transfers';

export type { Transfer };

/** Raised by the transfer record's condition: the numeric id was drawn twice in one millisecond. */
export class TransferIdTakenError extends Error {
  override readonly name = 'TransferIdTakenError';
}

export function transferRecordItem(
  ctx: Pick<AppContext, 'tables'>,
  transfer: Transfer,
  createdAtMs: number,
): TaggedItem {
  return {
    item: transferEntity.put(ctx.tables, transfer, {
      extra: { created_ms: createdAtMs },
      condition: 'attribute_not_exists(pk)',
    }),
    onConditionFailed: () => new TransferIdTakenError(),
    counts: [{ platformCode: transfer.platform_code, list: TRANSFERS_LIST, bucket: ALL, delta: 1 }],
  };
}

/**
 * The transfer as listed for another platform: the one whose participant it debits, when the transfer was
 * booked by a platform acting for that participant under a grant. A copy of the record in the transfer's own
 * partition, in that platform's list (and counted there), so `GET /transfers` and `GET /transfers/{id}` show
 * it to both. Its `platform_code` is the platform it is listed for, as every listed record's is (the ledger
 * check counts records by it); `booked_by_platform_code` keeps who booked it.
 */
export function transferViewItem(
  ctx: Pick<AppContext, 'tables'>,
  transfer: Transfer,
  createdAtMs: number,
  viewerPlatformCode: string,
): TaggedItem {
  const view = { ...transfer, platform_code: viewerPlatformCode, booked_by_platform_code: transfer.platform_code };
  return {
    item: transferViewEntity.put(ctx.tables, view, {
      extra: { created_ms: createdAtMs },
      condition: 'attribute_not_exists(pk)',
    }),
    onConditionFailed: () => new TransferIdTakenError(),
    counts: [{ platformCode: viewerPlatformCode, list: TRANSFERS_LIST, bucket: ALL, delta: 1 }],
  };
}

/**
 * The transfer `id` as `platformCode` may see it: the record of the platform that booked it, or the copy
 * listed for the platform whose participant it debits; undefined when neither is this platform's.
 */
export async function getTransfer(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  id: string,
  platformCode: string,
): Promise<Transfer | undefined> {
  // Both in one BatchGetItem: a read by id is one call whichever of the two this platform sees.
  const recordKey = transferEntity.key({ id });
  const found = await batchGetItems(ctx, [recordKey, transferViewEntity.key({ id, platform_code: platformCode })], {
    what: 'transfer read',
  });
  const record = found.find((item) => Object.entries(recordKey).every(([name, value]) => item[name] === value));
  if (!record) return undefined;
  if (record.platform_code === platformCode) return transferEntity.parse(record);
  const view = found.find((item) => item !== record);
  return view ? transferEntity.parse(view) : undefined;
}

/** The filters of `GET /transfers`, all exact matches on the transfer's own fields. */
export interface TransferListFilters {
  client_transfer_id?: string;
  from_participant_code?: string;
  to_participant_code?: string;
  from_account_group?: string;
  to_account_group?: string;
  from_account_label?: string;
  to_account_label?: string;
  asset?: string;
}

/** One page of a platform's transfers, newest first, with the count of those matching the filters. */
export async function pageOfTransfers(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'config' | 'caches' | 'retry' | 'cursorKey'>,
  platformCode: string,
  filters: TransferListFilters,
  request: PageRequest,
) {
  const filter = equalityFilter({ ...filters });
  const index = transferEntity.listIndex(
    'gsi1',
    { platform_code: platformCode },
    {
      descending: true,
      ...(filter && { filter }),
    },
  );
  const counter = filter ? undefined : () => readCount(ctx, platformCode, TRANSFERS_LIST);
  const page = await pageWithCount(
    ctx,
    index,
    request,
    { list: TRANSFERS_LIST, platformCode, filters: { ...filters } },
    counter,
  );
  return { ...page, items: page.items.map((item) => transferEntity.parse(item)) };
}
