import { GetCommand } from '@aws-sdk/lib-dynamodb';
import {
  withdrawalStatusSequence,
  type CustodyOutcome,
  type WithdrawalStatus,
  type Withdrawal,
} from '../domain/withdrawals.js';
import { withdrawalView } from '../domain/withdrawals.js';
import { withdrawalEntity, type StoredWithdrawal } from './entities/withdrawal.js';
import { eventItem } from './events.js';
import { equalityFilter, pageWithCount, type PageRequest } from './table/paging.js';
import { ALL, readCount } from './table/counters.js';
import type { TaggedItem } from './table/transaction-items.js';
import type { AppContext } from '../context.js';

const WITHDRAWALS_LIST = 'withdrawals';

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
    item: withdrawalEntity.put(
      ctx.tables,
      { ...withdrawal, status_history: [{ status: withdrawal.status, at: withdrawal.created_at }] },
      { condition: 'attribute_not_exists(pk)' },
    ),
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
    item: withdrawalEntity.update(
      ctx.tables,
      { withdrawal_request_id: withdrawalId },
      {
        update:
          'SET #status = :next, transaction_hash = :hash, updated_at = :now, status_history = list_append(status_history, :entry)',
        condition: 'attribute_exists(pk) AND #status = :pending',
        names: { '#status': 'status' },
        values: {
          ':next': outcome,
          ':pending': 'PENDING',
          ':hash': transactionHash,
          ':now': nowMs,
          ':entry': [{ status: outcome, at: nowMs }],
        },
      },
    ),
    onConditionFailed: () => new WithdrawalStatusChangedError(`withdrawal ${withdrawalId} is no longer PENDING`),
  };
  const after: Withdrawal = { ...withdrawal, status: outcome, transaction_hash: transactionHash, updated_at: nowMs };
  return [update, withdrawalStatusEvent(ctx, after, 'PENDING', nowMs)];
}

/** The withdrawal as the domain knows it: the stored item without its status history. */
function withdrawalOf(item: Readonly<Record<string, unknown>>): Withdrawal {
  const { status_history: _history, ...withdrawal }: StoredWithdrawal = withdrawalEntity.parse(item);
  return withdrawal;
}

/** Read strongly consistently: custody events decide on the status they then condition on. */
export async function getWithdrawal(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  withdrawalId: string,
): Promise<Withdrawal | undefined> {
  const out = await ctx.db.send(
    new GetCommand(withdrawalEntity.get(ctx.tables, { withdrawal_request_id: withdrawalId }, { consistent: true })),
  );
  return out.Item ? withdrawalOf(out.Item) : undefined;
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
  const index = withdrawalEntity.listIndex(
    'gsi1',
    { platform_code: platformCode },
    { descending: true, ...(filter && { filter }) },
  );
  // Unfiltered, the count is the platform's counter; a filtered count reads within the count budget.
  const counter = filter ? undefined : () => readCount(ctx, platformCode, WITHDRAWALS_LIST);
  const page = await pageWithCount(
    ctx,
    index,
    request,
    { list: WITHDRAWALS_LIST, platformCode, filters: { ...filters } },
    counter,
  );
  return { ...page, items: page.items.map(withdrawalOf) };
}
