import * as z from 'zod/mini';
import { integer } from '../entity/attributes.js';
import { defineEntity } from '../entity/entity.js';

/**
 * A hot account's booking queue (lib/ledger/hot-account.ts): the bookings waiting in its shards, their answers
 * and the committer's lease. Apart from the other ledger items (ledger.ts) because only the hot path writes them,
 * and a function loads that path when an account of its bookings is contended.
 */

/** A booking waiting under its hot account, in one of the queue's shards (`booking`: the serialized value). */
export const queuedBookingEntity = defineEntity({
  type: 'queued_booking',
  table: 'main',
  schema: z.object({ booking: z.string(), queued_at: integer, ttl: integer }),
  key: { pk: 'BOOKINGS#{account_key}#Q{shard}', sk: 'Q#{booking_id}' },
});

/** A queued booking's answer (`result`: a JSON `BookingResult`), written with its queue entry's delete. */
export const bookingResultEntity = defineEntity({
  type: 'booking_result',
  table: 'main',
  schema: z.object({ result: z.string(), expires_at_ms: integer, ttl: integer }),
  key: { pk: 'BOOKINGS#{account_key}#Q{shard}', sk: 'R#{booking_id}' },
});

/** A hot account's committer: `owner` holds it until `until_ms`. */
export const bookingLeaseEntity = defineEntity({
  type: 'booking_lease',
  table: 'main',
  schema: z.object({ owner: z.string(), until_ms: integer, ttl: integer }),
  key: { pk: 'BOOKINGS#{account_key}', sk: 'LEASE' },
});
