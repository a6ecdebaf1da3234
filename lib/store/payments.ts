import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { paymentStatusSequence, type PaymentStatus, type Payment } from '../domain/payments.js';
import { paymentView } from '../domain/payments.js';
import { paymentEntity, type StoredPayment } from './entities/payment.js';
import { eventItem } from './events.js';
import { equalityFilter, pageWithCount, type ListBinding, type PageRequest } from './table/paging.js';
import { ALL, bucketOf, readCount } from './table/counters.js';
import type { TaggedItem } from './table/transaction-items.js';
import type { AppContext } from '../context.js';

const PAYMENTS_LIST = 'payments';

/** The payment's creation, for the execution transaction that books its trade. */
export function paymentCreationItem(ctx: Pick<AppContext, 'tables'>, payment: Payment): TaggedItem {
  return {
    item: paymentEntity.put(
      ctx.tables,
      { ...payment, status_history: [{ status: payment.status, at: payment.created_at_ms }] },
      { condition: 'attribute_not_exists(pk)' },
    ),
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
    item: paymentEntity.update(
      ctx.tables,
      { transaction_id: transactionId },
      {
        update: 'SET #status = :next, updated_at_ms = :now, status_history = list_append(status_history, :entry)',
        condition: 'attribute_exists(pk) AND #status = :expected',
        names: { '#status': 'status' },
        values: {
          ':next': next,
          ':expected': expected,
          ':now': nowMs,
          ':entry': [{ status: next, at: nowMs }],
        },
      },
    ),
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

/** The payment as the domain knows it: the stored item without its status history. */
function paymentOf(item: Readonly<Record<string, unknown>>): Payment {
  const { status_history: _history, ...payment }: StoredPayment = paymentEntity.parse(item);
  return payment;
}

/** Read strongly consistently: bank events decide on the status they then condition on. */
export async function getPayment(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  transactionId: string,
): Promise<Payment | undefined> {
  const out = await ctx.db.send(
    new GetCommand(paymentEntity.get(ctx.tables, { transaction_id: transactionId }, { consistent: true })),
  );
  return out.Item ? paymentOf(out.Item) : undefined;
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
  const from = paymentEntity.indexSortKey('gsi1', {
    created_at_ms: Math.max(0, range.fromMs ?? 0),
    transaction_id: '',
  });
  // '~' sorts after every id character, so payments created in the last millisecond of the range count.
  const to = paymentEntity.indexSortKey('gsi1', {
    created_at_ms: range.toMs ?? 999_999_999_999_999,
    transaction_id: '~',
  });
  if (from > to) return { items: [] as Payment[], page: request.page, nextCursor: null, count: 0 };
  const filter = equalityFilter({ ...filters });
  const index = paymentEntity.listIndex(
    'gsi1',
    { platform_code: platformCode },
    { sortRange: { between: [from, to] }, descending: true, ...(filter && { filter }) },
  );
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
  return { ...page, items: page.items.map(paymentOf) };
}
