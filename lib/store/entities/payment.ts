import * as z from 'zod/mini';
import { PAYMENT_STATUSES } from '../../domain/payments.js';
import { accountRef, integer } from '../entity/attributes.js';
import { defineEntity } from '../entity/entity.js';

const paymentStatus = z.enum(PAYMENT_STATUSES);

/** A payment as stored: the domain's `Payment` and the history of its statuses. */
const paymentSchema = z.object({
  transaction_id: z.string(),
  platform_code: z.string(),
  trade_id: z.nullable(z.string()),
  participant_code: z.string(),
  asset: z.string(),
  /** What the bank moves, fixed-point with the asset's decimals (text). */
  amount: z.string(),
  /** What the trade itself was worth (text); the difference is the bank fee. */
  trade_amount: z.string(),
  status: paymentStatus,
  transfer_type: z.enum(['debit', 'credit']),
  bank_transfer_id: z.string(),
  funding: z.enum(['ach_debit_credit', 'inbound_reference']),
  external_account_id: z.nullable(z.string()),
  description: z.nullable(z.string()),
  bank_fee: z.nullable(z.string()),
  inbound_reference_id: z.nullable(z.string()),
  clearing_account: accountRef,
  created_at_ms: integer,
  updated_at_ms: integer,
  /** Every status it had, the first its creation's; each change appends one. */
  status_history: z.array(z.object({ status: paymentStatus, at: integer })),
});

export type StoredPayment = z.output<typeof paymentSchema>;

/** An ACH payment transaction, in its platform's list by creation time. */
export const paymentEntity = defineEntity({
  type: 'payment',
  table: 'main',
  schema: paymentSchema,
  key: { pk: 'PAYMENT#{transaction_id}', sk: 'PAYMENT' },
  // The date filters of GET /payments/status are ranges of this sort key.
  indexes: { gsi1: { pk: 'PLATFORM#{platform_code}#PAYMENTS', sk: '{created_at_ms:time}#{transaction_id}' } },
});
