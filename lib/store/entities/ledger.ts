import * as z from 'zod/mini';
import { decimal, integer, text } from '../entity/attributes.js';
import { defineEntity } from '../entity/entity.js';

/**
 * The ledger's items: accounts (and the outside world's shards), movements with their list entries. A hot
 * account's booking queue, results and lease are in booking-queue.ts (only the hot path, which a booking
 * function loads when it meets contention, writes them), the list counters' shards in counter.ts (every
 * function that writes a listed record moves one, and needs no other ledger item): a bundle keeps every
 * definition of a module it imports.
 */

/** Shared by the optional text attributes (`text` in attributes.ts says why). */
const optionalText = z.optional(text);

/**
 * An account's balance and identity. A platform or customer account (one with `platform_code`) also carries
 * `version` (its balance changes, numbering its `account_balance.changed` events; 0 when no booking has
 * numbered it) and `movement_count` (its movement entries); a system account or outside-world shard need carry
 * neither, at any version, and reads both as 0 (`parseAccount`, lib/store/ledger.ts). `hot_until_ms`
 * while contention queues its bookings. Version 2 (lib/store/README.md, "Item versions") guarantees
 * `last_update` and, on a platform or customer account, `version` and `movement_count`; version 1 lacked them.
 */
const accountSchema = z.object({
  participant_code: text,
  account_group: text,
  account_label: text,
  asset: text,
  account_id: text,
  balance: decimal,
  last_update: integer,
  platform_code: optionalText,
  version: z.optional(integer),
  movement_count: z.optional(integer),
  hot_until_ms: z.optional(integer),
});

export type StoredAccount = z.output<typeof accountSchema>;

const ACCOUNT_LEGACY = [{ below: 2, defaults: { last_update: 0, version: 0, movement_count: 0 } }] as const;

export const accountEntity = defineEntity({
  type: 'account',
  table: 'main',
  schema: accountSchema,
  key: { pk: 'ACCOUNT#{participant_code}#{account_group}#{account_label}#{asset}', sk: 'ACCOUNT' },
  indexes: {
    gsi1: {
      pk: 'PLATFORM#{platform_code}#ACCOUNTS',
      sk: '{participant_code}#{account_group}#{account_label}#{asset}',
      sparse: true,
    },
    gsi2: { pk: 'ACCOUNTID#{account_id}', sk: 'ACCOUNT', sparse: true },
  },
  version: 2,
  legacy: ACCOUNT_LEGACY,
});

/**
 * One shard of an outside-world balance (the liquidity provider's, the external boundary's): the account's
 * balance is the sum of its shards (and of its unsharded item, from before the sharding). Blind additions by
 * bookings; in no index.
 */
export const accountShardEntity = defineEntity({
  type: 'account',
  table: 'main',
  schema: accountSchema,
  key: { pk: 'ACCOUNT#{participant_code}#{account_group}#{account_label}#{asset}#SHARD#{shard}', sk: 'ACCOUNT' },
  version: 2,
  legacy: ACCOUNT_LEGACY,
});

/** A leg as a movement's record stores it: the account's four parts, its platform (null: a system account), the signed amount. */
const legSchema = z.object({
  participant_code: text,
  account_group: text,
  account_label: text,
  asset: text,
  // Absent on legs written before platforms were recorded: read as null.
  platform_code: z.optional(z.nullable(text)),
  amount: decimal,
});

/** What a movement's record and its second platform's entry both carry. */
const movementSchema = z.object({
  movement_id: text,
  movement_type: text,
  reference: text,
  /** ms */
  created_at: integer,
  legs: z.array(legSchema),
  /** The platform whose list the item is in (absent on a movement of system accounts alone). */
  platform_code: optionalText,
  /** What the platform list filters on: the platform legs' accounts, participants and assets. */
  account_ids: z.optional(z.array(text)),
  participant_codes: z.optional(z.array(text)),
  assets: z.optional(z.array(text)),
});

export type StoredMovementItem = z.output<typeof movementSchema>;

/** A booked movement, immutable; the list entry of the first platform whose accounts it touches. */
export const movementEntity = defineEntity({
  type: 'movement',
  table: 'main',
  schema: movementSchema,
  key: { pk: 'MOVEMENT#{movement_id}', sk: 'MOVEMENT' },
  indexes: {
    gsi1: { pk: 'PLATFORM#{platform_code}#MOVEMENTS', sk: '{created_at:time}#{movement_id}', sparse: true },
  },
});

/** A movement's list entry for a second platform whose accounts it touches (a transfer under a grant). */
export const movementEntryEntity = defineEntity({
  type: 'movement_entry',
  table: 'main',
  schema: z.extend(movementSchema, { platform_code: text }),
  key: { pk: 'MOVEMENT#{movement_id}', sk: 'PLATFORM#{platform_code}' },
  indexes: { gsi1: { pk: 'PLATFORM#{platform_code}#MOVEMENTS', sk: '{created_at:time}#{movement_id}' } },
});

/** A movement's entry for one platform or customer account it changes: that account's net change, in its movements list. */
export const movementAccountEntryEntity = defineEntity({
  type: 'movement_account_entry',
  table: 'main',
  schema: z.object({
    movement_id: text,
    movement_type: text,
    reference: text,
    created_at: integer,
    account_id: text,
    participant_code: text,
    asset: text,
    platform_code: text,
    change: decimal,
  }),
  key: { pk: 'MOVEMENT#{movement_id}', sk: 'ACCOUNT#{account_id}' },
  indexes: { gsi1: { pk: 'ACCOUNT#{account_id}#MOVEMENTS', sk: '{created_at:time}#{movement_id}' } },
});
