import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { paymentStatusSequence, type PaymentStatus, type Payment } from '../domain/payments.js';
import { paymentView } from '../domain/payments.js';
import { eventItem } from './events.js';
import { equalityFilter, pageWithCount, type ListBinding, type ListIndex, type PageRequest } from './table/paging.js';
import { keys } from './keys.js';
import { readInteger } from './table/integers.js';
import { ALL, bucketOf, readCount } from './table/counters.js';
import type { TaggedItem } from './table/transaction-items.js';
import type { AppContext } from '../context.js';

const PAYMENTS_LIST = 'payments';

/** The payment's creation, for the execution transaction that books its trade. */
export function paymentCreationItem(ctx: Pick<AppContext, 'tables'>, payment: Payment): TaggedItem {
  return {
    item: {
      Put: {
        TableName: ctx.tables.main,
        Item: {
          ...payment,
          ...keys.payment(payment.transaction_id),
          gsi1pk: keys.paymentsOfPlatform(payment.platform_code),
          gsi1sk: keys.paymentSortKey(payment.created_at_ms, payment.transaction_id),
          type: 'payment',
          status_history: [{ status: payment.status, at: payment.created_at_ms }],
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    counts: [
      { platformCode: payment.platform_code, list: PAYMENTS_LIST, bucket: ALL, delta: 1 },
      {
        platformCode: payment.platform_code,
        list: PAYMENTS_LIST,
        bucket: bucketOf('status', payment.status),
        delta: 1,
      },
    ],
  };
}

/** Raised by a status update whose expected current status no longer holds (another event got there first). */
export class PaymentStatusChangedError extends Error {
  override readonly name = 'PaymentStatusChangedError';
}

/**
 * Moves a payment from `expected` to `next`, appending to its history, and records its payment.status_changed
 * event. Conditioned on the current status, so two deliveries of events racing each other can't both apply
 * (and can't both book money, or tell of the change twice).
 */
export function paymentStatusItems(
  ctx: Pick<AppContext, 'tables'>,
  payment: Payment,
  expected: PaymentStatus,
  next: PaymentStatus,
  nowMs: number,
): TaggedItem[] {
  const transactionId = payment.transaction_id;
  const update: TaggedItem = {
    item: {
      Update: {
        TableName: ctx.tables.main,
        Key: keys.payment(transactionId),
        UpdateExpression:
          'SET #status = :next, updated_at_ms = :now, status_history = list_append(status_history, :entry)',
        ConditionExpression: 'attribute_exists(pk) AND #status = :expected',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':next': next,
          ':expected': expected,
          ':now': nowMs,
          ':entry': [{ status: next, at: nowMs }],
        },
      },
    },
    onConditionFailed: () => new PaymentStatusChangedError(`payment ${transactionId} is no longer ${expected}`),
    counts: [
      { platformCode: payment.platform_code, list: PAYMENTS_LIST, bucket: bucketOf('status', expected), delta: -1 },
      { platformCode: payment.platform_code, list: PAYMENTS_LIST, bucket: bucketOf('status', next), delta: 1 },
    ],
  };
  // payment.status_changed, with the payment as GET /payments/status shows it.
  const event = eventItem(
    ctx,
    {
      type: 'payment.status_changed',
      platformCode: payment.platform_code,
      resource: { type: 'payment', id: transactionId },
      sequence: paymentStatusSequence(next),
      previousStatus: expected,
      data: paymentView({ ...payment, status: next, updated_at_ms: nowMs }),
    },
    nowMs,
  );
  return [update, event];
}

function toPayment(item: Record<string, any>): Payment {
  return {
    transaction_id: item.transaction_id,
    platform_code: item.platform_code,
    trade_id: item.trade_id ?? null,
    participant_code: item.participant_code,
    asset: item.asset,
    amount: item.amount,
    trade_amount: item.trade_amount,
    status: item.status,
    transfer_type: item.transfer_type,
    bank_transfer_id: item.bank_transfer_id,
    funding: item.funding,
    external_account_id: item.external_account_id ?? null,
    description: item.description ?? null,
    bank_fee: item.bank_fee ?? null,
    inbound_reference_id: item.inbound_reference_id ?? null,
    clearing_account: {
      participant_code: item.clearing_account.participant_code,
      account_group: item.clearing_account.account_group,
      account_label: item.clearing_account.account_label,
      asset: item.clearing_account.asset,
    },
    created_at_ms: readInteger(item.created_at_ms),
    updated_at_ms: readInteger(item.updated_at_ms),
  };
}

/** Read strongly consistently: bank events decide on the status they then condition on. */
export async function getPayment(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  transactionId: string,
): Promise<Payment | undefined> {
  const out = await ctx.db.send(
    new GetCommand({ TableName: ctx.tables.main, Key: keys.payment(transactionId), ConsistentRead: true }),
  );
  return out.Item ? toPayment(out.Item) : undefined;
}

/** The filters of `GET /payments/status` besides the creation-time range (which is the key range). */
interface PaymentListFilters {
  participant_code?: string;
  transaction_id?: string;
  trade_id?: string;
  status?: PaymentStatus;
}

/**
 * One page of a platform's payments created within [fromMs, toMs] (inclusive, both optional), newest
 * first, with the count of those matching.
 */
export async function pageOfPayments(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'config' | 'caches' | 'retry' | 'cursorKey'>,
  platformCode: string,
  range: { fromMs?: number; toMs?: number },
  filters: PaymentListFilters,
  request: PageRequest,
  bindingFilters: ListBinding['filters'],
) {
  const from = keys.paymentSortKey(Math.max(0, range.fromMs ?? 0), '');
  // '~' sorts after every id character, so payments created in the last millisecond of the range count.
  const to = keys.paymentSortKey(range.toMs ?? 999_999_999_999_999, '~');
  if (from > to) return { items: [] as Payment[], page: request.page, nextCursor: null, count: 0 };
  const filter = equalityFilter({ ...filters });
  const index: ListIndex = {
    indexName: 'gsi1',
    partition: { attribute: 'gsi1pk', value: keys.paymentsOfPlatform(platformCode) },
    sortAttribute: 'gsi1sk',
    sortRange: { between: [from, to] },
    descending: true,
    ...(filter && { filter }),
  };
  // Counted: all payments, and payments by status; any other filter or a date range is counted by reading.
  const { status, ...others } = filters;
  const counted =
    range.fromMs === undefined &&
    range.toMs === undefined &&
    Object.values(others).every((value) => value === undefined);
  const counter = counted
    ? () => readCount(ctx, platformCode, PAYMENTS_LIST, status === undefined ? ALL : bucketOf('status', status))
    : undefined;
  const page = await pageWithCount(
    ctx,
    index,
    request,
    { list: PAYMENTS_LIST, platformCode, filters: bindingFilters },
    counter,
  );
  return { ...page, items: page.items.map(toPayment) };
}
