import { EVENT_SCHEMAS, eventSchemaId } from '../http/schemas/events.js';

const DELIVERY_HEADERS = {
  'webhook-id': {
    required: true,
    description: 'The event id, the same on every retry: deduplicate on it.',
    schema: { type: 'string' },
  },
  'webhook-timestamp': {
    required: true,
    description: 'UNIX seconds of this attempt.',
    schema: { type: 'string', pattern: '^\\d+$' },
  },
  'webhook-signature': {
    required: true,
    description:
      '`v1,` + base64 HMAC-SHA256 of `webhook-id.webhook-timestamp.body`, keyed with the endpoint secret (after `whsec_`, base64-decoded). ' +
      'Two space-separated signatures during a secret rotation. Standard Webhooks v1.',
    schema: { type: 'string' },
  },
};

/**
 * OpenAPI 3.1 `webhooks`: one entry per event type, the delivery a platform's endpoint receives. A 2xx
 * within 15 s is success; other answers are retried (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h).
 */
export function webhookDescriptions() {
  const webhooks: Record<string, unknown> = {};
  for (const type of Object.keys(EVENT_SCHEMAS)) {
    webhooks[type] = {
      post: {
        operationId: `webhook${eventSchemaId(type)}`,
        summary: type,
        description: `Delivered to every enabled endpoint subscribed to \`${type}\`.`,
        tags: ['webhooks'],
        security: [],
        parameters: Object.entries(DELIVERY_HEADERS).map(([name, header]) => ({ name, in: 'header', ...header })),
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${eventSchemaId(type)}` } } },
        },
        responses: {
          '200': { description: 'Accepted (any 2xx).' },
          '410': { description: 'Gone: the endpoint is disabled.' },
          '429': { description: 'Retry no earlier than `Retry-After`.' },
          '503': { description: 'Retry no earlier than `Retry-After`.' },
        },
      },
    };
  }
  return { webhooks, webhookSchemas: Object.values(EVENT_SCHEMAS) };
}
