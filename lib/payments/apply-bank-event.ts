import * as z from 'zod/mini';
import { bankEventLegs } from '../domain/ach-clearing.js';
import { NotFoundError, ValidationError } from '../domain/errors.js';
import type { AccountRef } from '../domain/ledger.js';
import { Money } from '../domain/money.js';
import { applyPaymentEvent, type PaymentStatus } from '../domain/payments.js';
import { getAccount } from '../store/ledger.js';
import { book } from '../ledger/engine.js';
import { newBookingId } from '../ledger/booking.js';
import { getPayment, paymentStatusItems, PaymentStatusChangedError } from '../store/payments.js';
import { type TaggedItem } from '../store/table/transaction-items.js';
import { paymentView, type PaymentView } from '../domain/payments.js';
import { formatIssues, isPlainObject, messageId, nonEmptyString } from '../domain/validation.js';
import type { AppContext } from '../context.js';
import { recordNegativeClearingBalance, recordPaymentStatus } from '../observability/metrics.js';

interface BankEvent {
  transaction_id: string;
  status: string;
}

interface BankEventResult {
  /** `applied`: the status moved (and money with it where the status moves money); `noop`: a redelivery. */
  outcome: 'applied' | 'noop';
  payment: PaymentView;
}

/** Events racing on one payment re-decide on what the winner left; a handful of rounds settles any race. */
const MAX_ROUNDS = 5;

/**
 * Applies a bank's status event to a payment. Banks redeliver, so the current status again is a no-op;
 * a move the payment's state machine forbids is refused (ValidationError) and changes nothing. A move is
 * one transaction: the status update conditioned on the status it was decided from, plus, for `posted` and
 * `reversed`, the movement between the platform's ACH clearing account and the external boundary (see
 * `lib/domain/ach-clearing.ts`). The movement's id is derived from the payment and the status, and each of
 * those is reached at most once, so even a misbehaving caller can't book the same bank leg twice.
 * `alongWith` items (an operator's audit record) commit in the same transaction.
 */
export async function applyBankEvent(
  ctx: AppContext,
  event: BankEvent,
  options: { alongWith?: readonly TaggedItem[] } = {},
): Promise<BankEventResult> {
  for (let round = 1; ; round++) {
    const payment = await getPayment(ctx, event.transaction_id);
    if (!payment) throw new NotFoundError(`payment not found: ${event.transaction_id}`);
    const decision = applyPaymentEvent(payment.status, event.status);
    if (decision.kind === 'noop') return { outcome: 'noop', payment: paymentView(payment) };
    if (decision.kind === 'illegal') throw new ValidationError([decision.message]);

    const next = event.status as PaymentStatus;
    const nowMs = ctx.clock.nowMs();
    const legs = bankEventLegs(
      {
        transfer_type: payment.transfer_type,
        amount: new Money(payment.amount),
        clearing: { account: payment.clearing_account, platform_code: payment.platform_code },
      },
      next,
    );
    const movement = legs
      ? {
          movement_id: `payment-${payment.transaction_id}-${next}`,
          type: 'payment' as const,
          reference: `payment:${payment.transaction_id}`,
          legs,
        }
      : undefined;
    try {
      // The status condition goes first, so a lost race reads as such rather than as a missing balance.
      await book(ctx, {
        id: newBookingId(nowMs),
        atMs: nowMs,
        movement,
        items: [...paymentStatusItems(ctx, payment, payment.status, next, nowMs), ...(options.alongWith ?? [])],
      });
      recordPaymentStatus(ctx.metrics, next, payment.transaction_id);
      if (legs?.some((leg) => leg.mayOverdraw && leg.amount.isNegative())) await warnIfOverdrawn(ctx, payment);
      return { outcome: 'applied', payment: paymentView({ ...payment, status: next, updated_at_ms: nowMs }) };
    } catch (error) {
      if (error instanceof PaymentStatusChangedError && round < MAX_ROUNDS) continue;
      throw error;
    }
  }
}

/**
 * A bank event that took money out of the clearing account may have left it below zero: the platform now
 * owes that amount. It is booked (the bank's fact is never lost) and shown in GET /accounts; ops hear of it
 * here.
 */
async function warnIfOverdrawn(
  ctx: AppContext,
  payment: { transaction_id: string; platform_code: string; clearing_account: AccountRef },
): Promise<void> {
  const clearing = await getAccount(ctx, payment.clearing_account);
  if (!clearing || !clearing.balance.isNegative()) return;
  ctx.logger.warn('ACH clearing account below zero after a bank event', {
    platform_code: payment.platform_code,
    transaction_id: payment.transaction_id,
    account: `${clearing.participant_code}/${clearing.account_group}/${clearing.account_label}/${clearing.asset}`,
    balance: clearing.balance.toFixed(),
  });
  recordNegativeClearingBalance(ctx.metrics, payment.platform_code, clearing.balance.toFixed());
}

/**
 * A bank event as the bank's integration sends it. `status` is any text: which statuses a payment may move to
 * is the domain's rule (`applyPaymentEvent`), and its refusal names the status.
 */
const bankEventMessage = z.object({ transaction_id: messageId(), status: nonEmptyString() });

type BankEventReply = { result: 'applied' | 'noop'; payment: PaymentView } | { result: 'rejected'; errors: string[] };

/**
 * The bank-event Lambda's whole job, kept here so the function file stays wiring. A malformed event, an
 * unknown payment or an illegal move is answered `rejected` instead of thrown: redelivering it would never
 * succeed, and a thrown error makes asynchronous invokers retry. Anything unexpected (DynamoDB down) still
 * throws, so it is retried.
 */
export async function replyToBankEvent(ctx: AppContext, input: unknown): Promise<BankEventReply> {
  // Not an object at all: every field is missing, as for an empty one.
  const parsed = bankEventMessage.safeParse(isPlainObject(input) ? input : {});
  if (!parsed.success) return { result: 'rejected', errors: formatIssues(parsed.error.issues, 'event') };
  try {
    const { outcome, payment } = await applyBankEvent(ctx, parsed.data);
    return { result: outcome, payment };
  } catch (error) {
    if (error instanceof ValidationError) return { result: 'rejected', errors: error.errors };
    if (error instanceof NotFoundError) return { result: 'rejected', errors: [`transaction_id: ${error.message}`] };
    throw error;
  }
}
