import * as z from 'zod/mini';
import { integer, text } from '../entity/attributes.js';
import { defineEntity } from '../entity/entity.js';

/**
 * The TTL table's items: claims with a window. Each holds `expires_at_ms`, the authority every condition
 * compares with the service clock, and `ttl` (seconds), which only lets DynamoDB tidy up (days late, maybe).
 * They are written without a `type` attribute (nothing reads one in this table): see `lib/store/windows.ts`.
 */

/**
 * One schema per kind of attribute, shared by the attributes of its kind (`text` in attributes.ts says why):
 * every function builds this module when it is imported: 8 schema objects, from 27 with one per attribute.
 */
const optionalText = z.optional(text);
const optionalInteger = z.optional(integer);

/** A signature accepted for a mutating request; seeing it again inside the window is a replay. */
export const replayClaimEntity = defineEntity({
  type: 'signature_replay',
  table: 'ttl',
  schema: z.object({
    /** This claim's own mark: a put the SDK resent finds its own claim, not a replay. */
    claim: text,
    request_id: optionalText,
    expires_at_ms: integer,
    ttl: integer,
  }),
  key: { pk: 'REPLAY#{api_key}#{signature}' },
});

/** An `X-Request-Id` seen on a POST of this platform: its run in progress, or its stored answer. */
export const idempotencyRecordEntity = defineEntity({
  type: 'idempotency_record',
  table: 'ttl',
  schema: z.object({
    status: z.enum(['IN_PROGRESS', 'COMPLETED']),
    /** The run that holds it: only it completes or releases it. */
    owner: text,
    request_hash: text,
    /** While in progress: a retry may take it over after this. */
    in_progress_until_ms: optionalInteger,
    /** Once completed: the answer as JSON, or `sealed:` and the answer encrypted. */
    response: optionalText,
    /** Where the run's booking waits (a hot account's queue), as JSON. */
    queued_booking: optionalText,
    expires_at_ms: integer,
    ttl: integer,
  }),
  key: { pk: 'IDEMPOTENCY#{platform_code}#{request_id}' },
});

/** A client-chosen id that must be unique per platform for a window (client_transfer_id, client_trade_id). */
export const clientIdClaimEntity = defineEntity({
  type: 'client_id_claim',
  table: 'ttl',
  schema: z.object({
    /** The record the id names. */
    refers_to: text,
    expires_at_ms: integer,
    ttl: integer,
  }),
  key: { pk: 'CLIENTID#{kind}#{platform_code}#{client_id}' },
});

/**
 * An API key's request counts in one sustained rate-limit window (`lib/domain/rate-limits.ts`), by the window's
 * first second (epoch seconds): the window's `total` and one count per second of it, `s0`..`s9`
 * (SUSTAINED_WINDOW_SECONDS). Only ever written by an update that adds to it.
 */
export const rateWindowEntity = defineEntity({
  type: 'rate_window',
  table: 'ttl',
  schema: z.object({
    total: optionalInteger,
    s0: optionalInteger,
    s1: optionalInteger,
    s2: optionalInteger,
    s3: optionalInteger,
    s4: optionalInteger,
    s5: optionalInteger,
    s6: optionalInteger,
    s7: optionalInteger,
    s8: optionalInteger,
    s9: optionalInteger,
    ttl: integer,
  }),
  key: { pk: 'RATE#{api_key}#{window_start}' },
});
