import * as z from 'zod/mini';
import { integer } from '../entity/attributes.js';
import { defineEntity } from '../entity/entity.js';

/**
 * An event as stored: the envelope's exact bytes (`body`, what every delivery sends and signs) and only what a
 * key, an index or a filter needs besides, so an event stays under 1 KB (each booking writes one per platform
 * account it moves). The id is the key's, the type, time and sequence are in the body (and the time in the
 * index keys, `created_ms`, and the type in gsi2's partition, `event_type`: parts not stored).
 *
 * Version 2: its expiry is its `ttl` (whole seconds). Version 1 (no `item_version`) is either that, or an item
 * written before the items were trimmed, which also carries `event_id`, `event_type` and its expiry in
 * `expires_at_ms` (the readers take that one on a version 1 item; the item-version migration moves it to `ttl`).
 */
const eventSchema = z.object({
  platform_code: z.string(),
  resource_id: z.string(),
  body: z.string(),
  /** Deliver to this endpoint only, whatever it subscribes to (webhook.test). */
  only_endpoint_id: z.optional(z.string()),
  /** Set once the dispatcher has fanned it out (it leaves the due index then); absent before. */
  dispatched: z.optional(z.boolean()),
  ttl: integer,
  /** Written before the trim (version 1 only). */
  event_id: z.optional(z.string()),
  event_type: z.optional(z.string()),
  expires_at_ms: z.optional(integer),
});

export type StoredEventItem = z.output<typeof eventSchema>;

/** The event item's version (see the schema above). */
export const EVENT_ITEM_VERSION = 2;

/** Shards of the due index (gsi3: undispatched events, deliveries' next steps); the sweep reads them all. */
export const DUE_SHARDS = 8;

export const eventEntity = defineEntity({
  type: 'event',
  table: 'main',
  schema: eventSchema,
  key: { pk: 'EVENT#{event_id}', sk: 'EVENT' },
  indexes: {
    gsi1: { pk: 'PLATFORM#{platform_code}#EVENTS', sk: '{created_ms:time}#{event_id}' },
    gsi2: { pk: 'PLATFORM#{platform_code}#EVENTS#{event_type}', sk: '{created_ms:time}#{event_id}' },
    gsi3: { pk: 'WEBHOOKS#DUE#{due_shard}', sk: '{due_ms:time}#EVENT#{event_id}', sparse: true },
  },
  version: EVENT_ITEM_VERSION,
  // Version 1 lacked nothing version 2 holds: a pre-trim item's expiry is read from `expires_at_ms` (above).
});

/** A request to send an event again (POST /events/{id}/redeliver): an insert the dispatcher takes from the stream. */
export const eventRedeliveryEntity = defineEntity({
  type: 'event_redelivery',
  table: 'main',
  schema: z.object({
    event_id: z.string(),
    platform_code: z.string(),
    event_type: z.string(),
    only_endpoint_id: z.optional(z.string()),
    created_at: integer,
    expires_at_ms: integer,
    ttl: integer,
  }),
  key: { pk: 'EVENT#{event_id}', sk: 'REDELIVERY#{created_at:time}#{nonce}' },
});

/** The id of the event an item of the event's partition (the event, a redelivery request) belongs to, from its key. */
export function eventIdOfKey(pk: string): string {
  return pk.slice(eventEntity.partitionKey({ event_id: '' }).length);
}
