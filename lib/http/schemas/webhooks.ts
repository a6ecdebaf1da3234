import * as z from 'zod/mini';
import { EVENT_TYPES } from '../../domain/events.js';
import { described, epochMs, messageOf, pageOf } from './common.js';
import { eventSchema } from './events.js';

/** A webhook endpoint as the platform sees it (never its secret, except in the create and rotate answers). */
const endpointFields = {
  id: described(z.string(), 'Endpoint id (`we_...`).'),
  url: z.string(),
  event_types: described(z.nullable(z.array(z.enum(EVENT_TYPES))), 'The types it receives; null for every type.'),
  description: z.nullable(z.string()),
  enabled: z.boolean(),
  disabled_reason: described(
    z.nullable(z.string()),
    'Why the service disabled it (410 Gone, five days of failures); null otherwise.',
  ),
  disabled_at: z.nullable(epochMs('When it was disabled')),
  failing_since: z.nullable(epochMs('Start of the current run of failed attempts')),
  last_success_at: z.nullable(epochMs('Last successful delivery')),
  created_at: epochMs('Created'),
  updated_at: epochMs('Last changed'),
};
const webhookEndpointSchema = z.object(endpointFields).check(z.meta({ id: 'WebhookEndpoint' }));

const secretField = {
  secret: described(z.string().check(z.regex(/^whsec_/)), 'The signing secret, shown in this answer only.'),
};
const withSecret = z.object({ ...endpointFields, ...secretField });

export const endpointResponse = messageOf(webhookEndpointSchema);
export const endpointWithSecretResponse = messageOf(withSecret);
export const rotatedEndpointResponse = messageOf(
  z.object({
    ...endpointFields,
    ...secretField,
    previous_secret_expires_at: epochMs('Until when the previous secret signs beside the new one'),
  }),
);
export const endpointListResponse = pageOf(webhookEndpointSchema);
export const endpointDeletedResponse = messageOf(z.object({ id: z.string(), deleted: z.literal(true) }));

const attemptSchema = z
  .object({
    event_id: z.string(),
    attempt: z.int().check(z.minimum(1)),
    attempted_at: epochMs('When the attempt started'),
    status_code: described(z.nullable(z.int()), "The receiver's status; null when no answer came."),
    latency_ms: z.int(),
    error: z.nullable(z.string()),
    outcome: z.enum(['succeeded', 'failed', 'gone', 'refused', 'endpoint_unavailable']),
    next_retry_at: z.nullable(epochMs('When it will be tried again; null: it will not')),
  })
  .check(z.meta({ id: 'WebhookAttempt' }));
export const attemptListResponse = pageOf(attemptSchema);

export const eventResponse = messageOf(eventSchema);
export const eventListResponse = pageOf(eventSchema);
export const redeliveryResponse = messageOf(
  z.object({ id: z.string(), redelivery_requested_at: epochMs('When the redelivery was asked for') }),
);
