import { ValidationError } from '../domain/errors.js';
import { isPaymentStatus, PAYMENT_STATUSES, type PaymentStatus } from '../domain/payments.js';
import { listEnvelope } from '../domain/list-envelope.js';
import { getParticipant } from '../store/participants.js';
import { pageOfPayments } from '../store/payments.js';
import { hasRelationship } from '../store/relationships.js';
import { paymentView } from '../domain/payments.js';
import type { AppContext } from '../context.js';

interface PaymentFilters {
  /** UNIX seconds, inclusive, on created_at. */
  start_date?: number;
  end_date?: number;
  participant?: string;
  transaction_id?: string;
  trade_id?: string;
  status?: string;
  page: number;
  size: number;
  cursor?: string;
}

/** The platform itself, its customers, and participants it holds a relationship for. */
async function relatedToPlatform(ctx: AppContext, platformCode: string, participantCode: string): Promise<boolean> {
  const participant = await getParticipant(ctx, participantCode);
  if (!participant) return false;
  if (participant.platform_code === platformCode) return true;
  return hasRelationship(ctx, platformCode, 'submits_platform_transfers_for', participantCode);
}

/**
 * `GET /payments/status`: the platform's payments, newest first, one page. The date range is a key range on
 * the platform's payment index; the other filters narrow the read (lib/store/table/paging.ts). A participant the platform has no
 * relationship with is refused rather than answered with an empty list, with the same words whether or
 * not it exists elsewhere.
 */
export async function listPayments(ctx: AppContext, platformCode: string, filters: PaymentFilters) {
  const errors: string[] = [];
  if (filters.status !== undefined && !isPaymentStatus(filters.status))
    errors.push(`status: must be one of ${PAYMENT_STATUSES.join(', ')}`);
  if (filters.start_date !== undefined && filters.end_date !== undefined && filters.end_date < filters.start_date) {
    errors.push('end_date: must not be before start_date');
  }
  if (filters.participant !== undefined && !(await relatedToPlatform(ctx, platformCode, filters.participant))) {
    errors.push(`participant: no participant '${filters.participant}' that this platform has a relationship with`);
  }
  if (errors.length > 0) throw new ValidationError(errors);

  const { page, size, cursor, ...bindingFilters } = filters;
  const found = await pageOfPayments(
    ctx,
    platformCode,
    {
      fromMs: filters.start_date === undefined ? undefined : filters.start_date * 1000,
      // Seconds are inclusive: everything up to the last millisecond of end_date.
      toMs: filters.end_date === undefined ? undefined : filters.end_date * 1000 + 999,
    },
    {
      participant_code: filters.participant,
      transaction_id: filters.transaction_id,
      trade_id: filters.trade_id,
      status: filters.status as PaymentStatus | undefined,
    },
    { page, pageSize: size, cursor },
    bindingFilters,
  );
  return listEnvelope(found.items.map(paymentView), {
    page: found.page,
    pageSize: size,
    count: found.count,
    nextCursor: found.nextCursor,
  });
}
