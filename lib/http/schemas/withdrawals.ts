import * as z from 'zod/mini';
import { amount, described, epochMs, isoInstant, messageOf, pageOf } from './common.js';

/** The reference API's withdrawal request fields, every one present; null where this service has no value. */
export const withdrawalRequestFields = {
  id: described(z.string(), 'The withdrawal request id.'),
  withdrawal_account_id: z.null(),
  participant_code: z.string(),
  beneficiary_participant_code: z.null(),
  sender_participant_code: z.null(),
  requestor_participant_code: z.string(),
  requested_amount: amount('What leaves on chain.'),
  settled_amount: described(z.nullable(amount('')), 'What left on chain, once custody confirmed it.'),
  status: described(z.enum(['PENDING', 'CONFIRMED', 'FAILED']), 'PENDING until custody answers.'),
  on_chain_status: z.nullable(z.enum(['PENDING', 'CONFIRMED'])),
  asset: z.string(),
  network: z.string(),
  withdrawal_address: z.string(),
  account_group: z.string(),
  account_label: z.string(),
  transaction_id: described(z.nullable(z.string()), 'The chain transaction, once confirmed.'),
  input_data: z.null(),
  requested_timestamp: epochMs('Last change'),
  created_timestamp: isoInstant('Created, ISO 8601.'),
  gas_price: z.null(),
  client_withdrawal_request_id: z.null(),
  fee_amount: amount('The network fee, in the asset.'),
  withdrawal_fee: z.null(),
  quoted_fee_amount: amount('The network fee as quoted, in the asset.'),
  quoted_fee_notional: amount('The network fee as quoted, in the quoted currency.'),
  quoted_fee_asset: z.string(),
  quoted_currency: z.string(),
  trade_id: z.string(),
  quote_id: z.string(),
  parent_link_id: z.null(),
  parent_link_id_source: z.null(),
  amount_in_usd: z.null(),
  contract_validation_id: z.null(),
  recipient_instructions: z.null(),
};

const withdrawalRequestSchema = z.object(withdrawalRequestFields).check(z.meta({ id: 'WithdrawalRequest' }));

/**
 * One request, as the reference answers it: `message` is a one-element array (its clients read `message[0]`).
 */
export const withdrawalRequestResponse = messageOf(
  z
    .array(withdrawalRequestSchema)
    .check(
      z.minLength(1),
      z.maxLength(1),
      z.meta({ description: 'Exactly one withdrawal request, as the reference API answers it.' }),
    ),
);

export const withdrawalRequestListResponse = pageOf(withdrawalRequestSchema);
