import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { equalityFilter, pageWithCount, type ListIndex, type PageRequest } from './table/paging.js';
import { keys } from './keys.js';
import { readInteger } from './table/integers.js';
import { ALL, readCount } from './table/counters.js';
import type { TaggedItem } from './table/transaction-items.js';
import type { AppContext } from '../context.js';

const TRANSFERS_LIST = 'transfers';

/** A transfer as stored and as returned by the API (the reference API's transfer shape). */
export interface Transfer {
  id: number;
  platform_code: string;
  created_at: string;
  updated_at: string;
  status: 'approved';
  from_participant_code: string;
  from_account_group: string;
  from_account_label: string;
  to_participant_code: string;
  to_account_group: string;
  to_account_label: string;
  asset: string;
  amount: string;
  movement_id: string;
  client_transfer_id: string | null;
  admin_transfer: boolean;
  prefunded: boolean;
}

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
    item: {
      Put: {
        TableName: ctx.tables.main,
        Item: {
          ...keys.transfer(transfer.id),
          gsi1pk: keys.transfersOfPlatform(transfer.platform_code),
          gsi1sk: keys.transferSortKey(createdAtMs, transfer.id),
          type: 'transfer',
          ...transfer,
          // Stored as a string so the id never depends on how a DynamoDB number is read back.
          id: String(transfer.id),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
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
  return {
    item: {
      Put: {
        TableName: ctx.tables.main,
        Item: {
          ...keys.transferView(transfer.id, viewerPlatformCode),
          gsi1pk: keys.transfersOfPlatform(viewerPlatformCode),
          gsi1sk: keys.transferSortKey(createdAtMs, transfer.id),
          type: 'transfer',
          ...transfer,
          id: String(transfer.id),
          platform_code: viewerPlatformCode,
          booked_by_platform_code: transfer.platform_code,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    onConditionFailed: () => new TransferIdTakenError(),
    counts: [{ platformCode: viewerPlatformCode, list: TRANSFERS_LIST, bucket: ALL, delta: 1 }],
  };
}

function toTransfer(item: Record<string, any>): Transfer {
  const {
    pk: _pk,
    sk: _sk,
    gsi1pk: _g1,
    gsi1sk: _g1s,
    type: _type,
    booked_by_platform_code: _bookedBy,
    ...rest
  } = item;
  return { ...(rest as Transfer), id: readInteger(item.id) };
}

/**
 * The transfer `id` as `platformCode` may see it: the record of the platform that booked it, or the copy
 * listed for the platform whose participant it debits; undefined when neither is this platform's.
 */
export async function getTransfer(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  id: string,
  platformCode: string,
): Promise<Transfer | undefined> {
  const out = await ctx.db.send(new GetCommand({ TableName: ctx.tables.main, Key: keys.transfer(id) }));
  if (!out.Item) return undefined;
  if (out.Item.platform_code === platformCode) return toTransfer(out.Item);
  const view = await ctx.db.send(
    new GetCommand({ TableName: ctx.tables.main, Key: keys.transferView(id, platformCode) }),
  );
  return view.Item ? toTransfer(view.Item) : undefined;
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
  const index: ListIndex = {
    indexName: 'gsi1',
    partition: { attribute: 'gsi1pk', value: keys.transfersOfPlatform(platformCode) },
    sortAttribute: 'gsi1sk',
    descending: true,
    ...(filter && { filter }),
  };
  const counter = filter ? undefined : () => readCount(ctx, platformCode, TRANSFERS_LIST);
  const page = await pageWithCount(
    ctx,
    index,
    request,
    { list: TRANSFERS_LIST, platformCode, filters: { ...filters } },
    counter,
  );
  return { ...page, items: page.items.map(toTransfer) };
}
