import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { SUBSCRIPTION_VISIBILITY_DESCRIPTION } from '../../lib/events/visibility.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { postWebhooksEndpoints } from '../../lib/routes.js';
import { optionalFreeText } from '../../lib/http/zod.js';
import { createEndpoint } from '../../lib/webhooks/manage-endpoints.js';

// url and event_types are checked by the use case, so every problem (a refused address too) comes back at once.
const body = z.object({
  url: z.optional(z.unknown()),
  event_types: z.optional(z.unknown()),
  description: optionalFreeText(500),
});

/** POST /webhooks/endpoints: a new endpoint; its `whsec_` secret is shown in this answer only. */
export const bind = routeHandler(
  postWebhooksEndpoints,
  {
    body,
    response: async () => (await import('../../lib/http/schemas/webhooks.js')).endpointWithSecretResponse,
    summary: 'Create a webhook endpoint',
    description: SUBSCRIPTION_VISIBILITY_DESCRIPTION,
    secretInResponse: true,
  },
  async ({ ctx, body, auth, claim }) => createEndpoint(ctx, auth, body, undefined, claim),
);

export const handler = onLambda(bind);
