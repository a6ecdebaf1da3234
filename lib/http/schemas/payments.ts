import * as z from 'zod/mini';
import { PAYMENT_STATUSES } from '../../domain/payments.js';
import { amount, described, isoInstant, pageOf } from './common.js';

export const paymentSchema = z
  .object({
    transaction_id: z.string(),
    trade_id: described(z.nullable(z.string()), 'The trade the payment funds.'),
    participant_code: z.string(),
    amount: amount('Amount debited or credited by the bank.'),
    status: described(
      z.enum(PAYMENT_STATUSES),
      '`submitted -> pending -> posted`, `submitted|pending -> failed`, `posted -> reversed`.',
    ),
    transfer_type: z.enum(['debit', 'credit']),
    bank_transfer_id: z.string(),
    created_at: isoInstant('Created, ISO 8601.'),
    updated_at: isoInstant('Last status change, ISO 8601.'),
  })
  .check(z.meta({ id: 'Payment' }));

export const paymentListResponse = pageOf(paymentSchema);
