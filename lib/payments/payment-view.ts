import type { Payment } from '../store/payments.js';

/** A payment as clients see it: the spec's payment transaction fields, timestamps as ISO 8601. */
export function paymentView(payment: Payment) {
  return {
    transaction_id: payment.transaction_id,
    trade_id: payment.trade_id,
    participant_code: payment.participant_code,
    amount: payment.amount,
    status: payment.status,
    transfer_type: payment.transfer_type,
    bank_transfer_id: payment.bank_transfer_id,
    created_at: new Date(payment.created_at_ms).toISOString(),
    updated_at: new Date(payment.updated_at_ms).toISOString(),
  };
}

export type PaymentView = ReturnType<typeof paymentView>;
