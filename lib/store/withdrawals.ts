import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { AccountRef } from '../domain/ledger.js';
import {
  withdrawalStatusSequence,
  type CustodyOutcome,
  type WithdrawalStatus,
  type Withdrawal,
} from '../domain/withdrawals.js';
import { keys } from './keys.js';
import { readInteger } from './table/integers.js';
import { equalityFilter, pageWithCount, type ListIndex, type PageRequest } from './table/paging.js';
import { ALL, readCount } from './table/counters.js';

const WITHDRAWALS_LIST = 'withdrawals';
import type { TaggedItem } from './table/transaction-items.js';
import type { AppContext } from '../context.js';
import { withdrawalView } from '../domain/withdrawals.js';
import { eventItem } from './events.js';

/**
 * withdrawal.status_changed: the request as GET /withdrawals/requests/{id} shows it,
 * without the destination address (the participant's own; personal data stays out of events).
 */
function withdrawalStatusEvent(
  ctx: Pick<AppContext, 'tables'>,
  withdrawal: Withdrawal,
  previousStatus: WithdrawalStatus | null,
  nowMs: number,
): TaggedItem {
  const { withdrawal_address: _address, ...data } = withdrawalView(withdrawal);
  return eventItem(
    ctx,
    {
      type: 'withdrawal.status_changed',
      platformCode: withdrawal.platform_code,
      resource: { type: 'withdrawal', id: withdrawal.withdrawal_request_id },
      sequence: withdrawalStatusSequence(withdrawal.status),
      previousStatus,
      data,
    },
    nowMs,
  );
}

/** A status update whose expected current status no longer held: another custody event got there first. */
export class WithdrawalStatusChangedError extends Error {
  override readonly name = 'WithdrawalStatusChangedError';
}

/**
 * `PENDING` -> an outcome and its withdrawal.status_changed event, for the transaction that books the
 * outcome's movement. Conditioned on the request still being PENDING, so of two racing deliveries only one
 * moves money (and tells of it).
 */
export function withdrawalCreationItems(ctx: Pick<AppContext, 'tables'>, withdrawal: Withdrawal): TaggedItem[] {
  const creation: TaggedItem = {
    item: {
      Put: {
        TableName: ctx.tables.main,
        Item: {
          ...withdrawal,
          ...keys.withdrawal(withdrawal.withdrawal_request_id),
          gsi1pk: keys.withdrawalsOfPlatform(withdrawal.platform_code),
          gsi1sk: keys.withdrawalSortKey(withdrawal.created_at, withdrawal.withdrawal_request_id),
          type: 'withdrawal',
          status_history: [{ status: withdrawal.status, at: withdrawal.created_at }],
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    counts: [{ platformCode: withdrawal.platform_code, list: WITHDRAWALS_LIST, bucket: ALL, delta: 1 }],
  };
  return [creation, withdrawalStatusEvent(ctx, withdrawal, null, withdrawal.created_at)];
}

export function withdrawalOutcomeItems(
  ctx: Pick<AppContext, 'tables'>,
  withdrawal: Withdrawal,
  outcome: CustodyOutcome,
  transactionHash: string | null,
  nowMs: number,
): TaggedItem[] {
  const withdrawalId = withdrawal.withdrawal_request_id;
  const update: TaggedItem = {
    item: {
      Update: {
        TableName: ctx.tables.main,
        Key: keys.withdrawal(withdrawalId),
        UpdateExpression:
          'SET #status = :next, transaction_hash = :hash, updated_at = :now, status_history = list_append(status_history, :entry)',
        ConditionExpression: 'attribute_exists(pk) AND #status = :pending',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':next': outcome,
          ':pending': 'PENDING',
          ':hash': transactionHash,
          ':now': nowMs,
          ':entry': [{ status: outcome, at: nowMs }],
        },
      },
    },
    onConditionFailed: () => new WithdrawalStatusChangedError(`withdrawal ${withdrawalId} is no longer PENDING`),
  };
  const after: Withdrawal = { ...withdrawal, status: outcome, transaction_hash: transactionHash, updated_at: nowMs };
  return [update, withdrawalStatusEvent(ctx, after, 'PENDING', nowMs)];
}

function accountRef(raw: Record<string, any>): AccountRef {
  return {
    participant_code: raw.participant_code,
    account_group: raw.account_group,
    account_label: raw.account_label,
    asset: raw.asset,
  };
}

function toWithdrawal(item: Record<string, any>): Withdrawal {
  return {
    withdrawal_request_id: item.withdrawal_request_id,
    platform_code: item.platform_code,
    participant_code: item.participant_code,
    account_group: item.account_group,
    account_label: item.account_label,
    asset: item.asset,
    network: item.network,
    address: item.address,
    requested_amount: item.requested_amount,
    fee_amount: item.fee_amount,
    fee_notional: item.fee_notional,
    quoted_currency: item.quoted_currency,
    trade_id: item.trade_id,
    quote_id: item.quote_id,
    status: item.status,
    transaction_hash: item.transaction_hash ?? null,
    source_account: accountRef(item.source_account),
    escrow_account: accountRef(item.escrow_account),
    fee_account: accountRef(item.fee_account),
    created_at: readInteger(item.created_at),
    updated_at: readInteger(item.updated_at),
  };
}

/** Read strongly consistently: custody events decide on the status they then condition on. */
export async function getWithdrawal(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  withdrawalId: string,
): Promise<Withdrawal | undefined> {
  const out = await ctx.db.send(
    new GetCommand({ TableName: ctx.tables.main, Key: keys.withdrawal(withdrawalId), ConsistentRead: true }),
  );
  return out.Item ? toWithdrawal(out.Item) : undefined;
}

/** The filters of `GET /withdrawals/requests`: exact matches. */
interface WithdrawalListFilters {
  participant_code?: string;
  asset?: string;
  status?: WithdrawalStatus;
}

/** One page of a platform's withdrawal requests, newest first, with the count of those matching. */
export async function pageOfWithdrawals(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'config' | 'caches' | 'retry' | 'cursorKey'>,
  platformCode: string,
  filters: WithdrawalListFilters,
  request: PageRequest,
) {
  const filter = equalityFilter({
    participant_code: filters.participant_code,
    asset: filters.asset,
    status: filters.status,
  });
  const index: ListIndex = {
    indexName: 'gsi1',
    partition: { attribute: 'gsi1pk', value: keys.withdrawalsOfPlatform(platformCode) },
    sortAttribute: 'gsi1sk',
    descending: true,
    ...(filter && { filter }),
  };
  // Unfiltered, the count is the platform's counter; a filtered count reads within the count budget.
  const counter = filter ? undefined : () => readCount(ctx, platformCode, WITHDRAWALS_LIST);
  const page = await pageWithCount(
    ctx,
    index,
    request,
    { list: WITHDRAWALS_LIST, platformCode, filters: { ...filters } },
    counter,
  );
  return { ...page, items: page.items.map(toWithdrawal) };
}
