import * as z from 'zod/mini';
import { amount, described, isoInstant, messageOf, pageOf } from './common.js';

const transferSchema = z
  .object({
    id: described(z.int(), 'Transfer id.'),
    created_at: isoInstant('When the transfer was booked.'),
    updated_at: isoInstant('Last change.'),
    status: z.literal('approved'),
    from_participant_code: z.string(),
    from_account_group: z.string(),
    from_account_label: z.string(),
    to_participant_code: z.string(),
    to_account_group: z.string(),
    to_account_label: z.string(),
    asset: z.string(),
    amount: amount('Amount moved.'),
    movement_id: described(z.string(), 'The ledger movement that booked it.'),
    client_transfer_id: described(
      z.nullable(z.string()),
      "The client's id, unique per platform for 72 hours; null when none was given.",
    ),
    admin_transfer: z.boolean(),
    prefunded: z.boolean(),
  })
  .check(z.meta({ id: 'Transfer' }));

export const transferResponse = messageOf(transferSchema);
export const transferListResponse = pageOf(transferSchema);
