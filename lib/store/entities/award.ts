import * as z from 'zod/mini';
import { accountRef, integer } from '../entity/attributes.js';
import { defineEntity } from '../entity/entity.js';

/**
 * Award distributions (lib/store/awards.ts): the distribution and its chunks share the partition
 * `AWARDS#<platform>#<distribution id>`, so one Query reads a distribution and its progress.
 */

const distributionSchema = z.object({
  platform_code: z.string(),
  /** The request's X-Request-Id when it had one, else an id of our own; echoed as `request_id`. */
  distribution_id: z.string(),
  asset: z.string(),
  /** Each recipient's amount, fixed-point with the asset's decimals (text). */
  quantity: z.string(),
  quoted_currency: z.string(),
  recipient_count: integer,
  /** quantity × recipient_count: what left the pool for the escrow (text). */
  total: z.string(),
  /** `distributionFingerprint` of the request, so a retry asking for something else is refused. */
  fingerprint: z.string(),
  pool: accountRef,
  /** The first escrow lane's account (each chunk names its own); the only one of distributions recorded before lanes. */
  escrow: accountRef,
  chunk_count: integer,
  status: z.enum(['distributing', 'completed']),
  created_at: integer,
  completed_at: z.nullable(integer),
});

export type Distribution = z.output<typeof distributionSchema>;

/**
 * An award distribution, keyed by the request that made it so a retry finds it; on the open-distributions
 * index (sparse: removed on completion) for ops to find and resume one whose client gave up.
 */
export const distributionEntity = defineEntity({
  type: 'award_distribution',
  table: 'main',
  schema: distributionSchema,
  key: { pk: 'AWARDS#{platform_code}#{distribution_id}', sk: 'DISTRIBUTION' },
  indexes: {
    gsi2: { pk: 'AWARDS#OPEN', sk: '{created_at:time}#{platform_code}#{distribution_id}', sparse: true },
  },
});

const recipientSchema = z.object({ participant_code: z.string(), trade_id: z.string() });

export type Recipient = z.output<typeof recipientSchema>;

const chunkSchema = z.object({
  platform_code: z.string(),
  distribution_id: z.string(),
  index: integer,
  /** In request order, each with the trade id drawn for it at creation. */
  recipients: z.array(recipientSchema),
  /** Fixed at creation, so a retried chunk writes the same movement id (which can exist only once). */
  movement_id: z.string(),
  /**
   * The escrow account (lane) the chunk pays from, fixed at creation. Null: a chunk recorded before lanes
   * (version 1 without it), which pays from its distribution's `escrow` (never stored as null).
   */
  escrow: z.nullable(accountRef),
  status: z.enum(['pending', 'credited']),
  credited_at: z.nullable(integer),
  /**
   * Recipients credited so far of a chunk recorded larger than one transaction now holds (an older, larger
   * chunk size), credited in parts: absent until its first part commits.
   */
  credited_recipients: z.optional(integer),
});

export type StoredChunk = z.output<typeof chunkSchema>;

/**
 * The award chunk item's schema version (lib/store/README.md, "Item versions"). 2: it carries `escrow`, the
 * lane it pays from. 1 (no `item_version`): either shape written before item versions; one recorded before
 * lanes has no `escrow` and pays from its distribution's (read as null here; the reader resolves it). A
 * version 2 item without `escrow` does not parse: it is never paid from the distribution's by default.
 */
export const AWARD_CHUNK_ITEM_VERSION = 2;

/** One chunk of a distribution: up to a transaction's worth of recipients, `pending` -> `credited` once. */
export const chunkEntity = defineEntity({
  type: 'award_distribution_chunk',
  table: 'main',
  schema: chunkSchema,
  key: { pk: 'AWARDS#{platform_code}#{distribution_id}', sk: 'CHUNK#{index:4}' },
  version: AWARD_CHUNK_ITEM_VERSION,
  legacy: [{ below: 2, defaults: { escrow: null } }],
});
