import * as z from 'zod/mini';
import { accountRef, integer } from '../entity/attributes.js';
import { defineEntity } from '../entity/entity.js';

const withdrawalStatus = z.enum(['PENDING', 'CONFIRMED', 'FAILED']);

/** A withdrawal request as stored: the domain's `Withdrawal` and the history of its statuses. */
const withdrawalSchema = z.object({
  withdrawal_request_id: z.string(),
  platform_code: z.string(),
  participant_code: z.string(),
  account_group: z.string(),
  account_label: z.string(),
  asset: z.string(),
  network: z.string(),
  address: z.string(),
  /** Amounts as text, fixed-point with their asset's decimals. */
  requested_amount: z.string(),
  fee_amount: z.string(),
  fee_notional: z.string(),
  quoted_currency: z.string(),
  trade_id: z.string(),
  quote_id: z.string(),
  status: withdrawalStatus,
  /** The chain transaction, set by custody's outcome; null until then (or when the outcome gave none). */
  transaction_hash: z.nullable(z.string()),
  source_account: accountRef,
  escrow_account: accountRef,
  fee_account: accountRef,
  created_at: integer,
  updated_at: integer,
  /** Every status it had, the first its creation's; its outcome appends one. */
  status_history: z.array(z.object({ status: withdrawalStatus, at: integer })),
});

export type StoredWithdrawal = z.output<typeof withdrawalSchema>;

/** A withdrawal request (convert-withdraw), in its platform's list by creation time. */
export const withdrawalEntity = defineEntity({
  type: 'withdrawal',
  table: 'main',
  schema: withdrawalSchema,
  key: { pk: 'WITHDRAWAL#{withdrawal_request_id}', sk: 'WITHDRAWAL' },
  indexes: {
    gsi1: { pk: 'PLATFORM#{platform_code}#WITHDRAWALS', sk: '{created_at:time}#{withdrawal_request_id}' },
  },
});
