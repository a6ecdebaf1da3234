import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { SUBSCRIPTION_VISIBILITY_DESCRIPTION } from '../../lib/events/visibility.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { patchWebhooksEndpointsId } from '../../lib/routes.js';
import { optionalFreeText } from '../../lib/http/zod.js';
import { changeEndpoint } from '../../lib/webhooks/manage-endpoints.js';

const body = z.object({
  url: z.optional(z.unknown()),
  event_types: z.optional(z.unknown()),
  description: optionalFreeText(500),
  enabled: z.optional(z.boolean()),
});

/** PATCH /webhooks/endpoints/{id}: url, event types, description, enabled (enabling clears a disable). */
export const bind = routeHandler(
  patchWebhooksEndpointsId,
  {
    body,
    path: z.object({ id: z.string().check(z.maxLength(100)) }),
    response: async () => (await import('../../lib/http/schemas/webhooks.js')).endpointResponse,
    summary: 'Change a webhook endpoint',
    description: SUBSCRIPTION_VISIBILITY_DESCRIPTION,
  },
  async ({ ctx, body, path, auth }) => changeEndpoint(ctx, auth, path.id, body),
);

export const handler = onLambda(bind);
