import * as z from 'zod/mini';
import { EVENT_TYPES } from '../../domain/events.js';
import { integer } from '../entity/attributes.js';
import { defineEntity } from '../entity/entity.js';

/**
 * Webhooks as stored: a platform's endpoints (and their count) in the platform's partition; an event's
 * deliveries (one per endpoint) and their attempts in the event's partition.
 */

/** How the due index (gsi3) spells a delivery's entry; the event's is in entities/event.ts. */
const DELIVERY_DUE = { pk: 'WEBHOOKS#DUE#{due_shard}', sk: '{due_ms:time}#DELIVERY#{event_id}#{endpoint_id}' } as const;

const deliveryState = z.enum(['pending', 'in_flight', 'scheduled', 'succeeded', 'failed']);

/**
 * One delivery of an event to one endpoint: written once by the dispatcher (a conditional put), each attempt
 * claimed by a conditional update. While work is outstanding it sits in the due index (sparse) at the time
 * the sweep should look at it (`due_shard`, `due_ms`: not stored).
 */
export const webhookDeliveryEntity = defineEntity({
  type: 'webhook_delivery',
  table: 'main',
  schema: z.object({
    event_id: z.string(),
    endpoint_id: z.string(),
    platform_code: z.string(),
    state: deliveryState,
    /** Attempts made over the delivery's life (attempt items are numbered by it). */
    attempts: integer,
    /** Attempts since the last (re)delivery request: the retry schedule is followed from here. */
    round_attempts: integer,
    /** Removed once it succeeded or failed for good. */
    next_attempt_at: z.optional(integer),
    /** While in flight: until when the claiming worker holds it. */
    lease_until: z.optional(integer),
    failure_reason: z.optional(z.string()),
    created_at: integer,
    expires_at_ms: integer,
    ttl: integer,
  }),
  key: { pk: 'EVENT#{event_id}', sk: 'DELIVERY#{endpoint_id}' },
  indexes: { gsi3: { ...DELIVERY_DUE, sparse: true } },
});

export type WebhookDelivery = z.output<typeof webhookDeliveryEntity.schema>;

/** One attempt of a delivery, written with the delivery's next state; in its endpoint's attempt log for 30 days. */
export const webhookAttemptEntity = defineEntity({
  type: 'webhook_attempt',
  table: 'main',
  schema: z.object({
    event_id: z.string(),
    endpoint_id: z.string(),
    attempt: integer,
    attempted_at: integer,
    /** null when no answer came. */
    status_code: z.nullable(integer),
    latency_ms: integer,
    error: z.nullable(z.string()),
    outcome: z.enum(['succeeded', 'failed', 'gone', 'refused', 'endpoint_unavailable']),
    /** When the delivery will be tried again; null when it won't. */
    next_retry_at: z.nullable(integer),
    expires_at_ms: integer,
    ttl: integer,
  }),
  key: { pk: 'EVENT#{event_id}', sk: 'ATTEMPT#{endpoint_id}#{attempt:4}' },
  indexes: {
    gsi1: { pk: 'WEBHOOK_ENDPOINT#{endpoint_id}#ATTEMPTS', sk: '{attempted_at:time}#{event_id}#{attempt:4}' },
  },
});

export type WebhookAttempt = z.output<typeof webhookAttemptEntity.schema>;

/**
 * A platform's webhook endpoint. Written whole at creation with every optional field null; later updates
 * remove some (`disabled_reason`, `failing_since`...), so each of those reads as absent or null alike.
 */
export const webhookEndpointEntity = defineEntity({
  type: 'webhook_endpoint',
  table: 'main',
  schema: z.object({
    endpoint_id: z.string(),
    platform_code: z.string(),
    url: z.string(),
    /** null: every event type. */
    event_types: z.optional(z.nullable(z.array(z.enum(EVENT_TYPES)))),
    description: z.optional(z.nullable(z.string())),
    enabled: z.boolean(),
    /** Why the service disabled it (410, five days of failures). */
    disabled_reason: z.optional(z.nullable(z.string())),
    disabled_at: z.optional(z.nullable(integer)),
    created_at: integer,
    updated_at: integer,
    /** Start of the current run of failed attempts (no success since). */
    failing_since: z.optional(z.nullable(integer)),
    last_success_at: z.optional(z.nullable(integer)),
    secret_ciphertext: z.string(),
    previous_secret_ciphertext: z.optional(z.nullable(z.string())),
    previous_secret_expires_at_ms: z.optional(z.nullable(integer)),
    /** webhook.test events sent so far (their sequence); absent before the first. */
    tests_sent: z.optional(integer),
  }),
  key: { pk: 'PLATFORM#{platform_code}', sk: 'WEBHOOK_ENDPOINT#{endpoint_id}' },
});

export type WebhookEndpointItem = z.output<typeof webhookEndpointEntity.schema>;

/** How many endpoints a platform has, moved in the transaction that creates (condition `< 20`) or deletes one. */
export const webhookEndpointCountEntity = defineEntity({
  type: 'webhook_endpoint_count',
  table: 'main',
  schema: z.object({ endpoints: integer }),
  key: { pk: 'PLATFORM#{platform_code}', sk: 'WEBHOOK_ENDPOINT_COUNT' },
});
