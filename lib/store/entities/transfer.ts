import * as z from 'zod/mini';
import { integerText } from '../entity/attributes.js';
import { defineEntity } from '../entity/entity.js';

/** A transfer as stored and as the API returns it (the reference API's transfer shape). */
const transferSchema = z.object({
  id: integerText,
  platform_code: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  status: z.literal('approved'),
  from_participant_code: z.string(),
  from_account_group: z.string(),
  from_account_label: z.string(),
  to_participant_code: z.string(),
  to_account_group: z.string(),
  to_account_label: z.string(),
  asset: z.string(),
  amount: z.string(),
  movement_id: z.string(),
  client_transfer_id: z.nullable(z.string()),
  admin_transfer: z.boolean(),
  prefunded: z.boolean(),
});

export type Transfer = z.output<typeof transferSchema>;

/** The record of a transfer, in its booking platform's list by creation time (`created_ms`, not stored). */
export const transferEntity = defineEntity({
  type: 'transfer',
  table: 'main',
  schema: transferSchema,
  key: { pk: 'TRANSFER#{id}', sk: 'TRANSFER' },
  indexes: { gsi1: { pk: 'PLATFORM#{platform_code}#TRANSFERS', sk: '{created_ms:time}#{id}' } },
});

/**
 * The transfer as listed for the platform whose participant it debits, when another platform booked it under
 * a grant: a copy in the transfer's partition, in that platform's list. Its `platform_code` is the platform it
 * is listed for (the ledger check counts records by it); `booked_by_platform_code` keeps who booked it.
 */
export const transferViewEntity = defineEntity({
  type: 'transfer',
  table: 'main',
  schema: z.extend(transferSchema, { booked_by_platform_code: z.string() }),
  key: { pk: 'TRANSFER#{id}', sk: 'VIEW#{platform_code}' },
  indexes: { gsi1: { pk: 'PLATFORM#{platform_code}#TRANSFERS', sk: '{created_ms:time}#{id}' } },
});
