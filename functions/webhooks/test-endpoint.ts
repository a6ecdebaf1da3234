import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { postWebhooksEndpointsIdTest } from '../../lib/routes.js';
import { sendTestEvent } from '../../lib/webhooks/manage-endpoints.js';

/** POST /webhooks/endpoints/{id}/test: a webhook.test event to this endpoint only; answers the event. */
export const bind = routeHandler(
  postWebhooksEndpointsIdTest,
  {
    path: z.object({ id: z.string().check(z.maxLength(100)) }),
    response: async () => (await import('../../lib/http/schemas/webhooks.js')).eventResponse,
    summary: 'Send a webhook.test event',
  },
  async ({ ctx, path, auth, claim }) => sendTestEvent(ctx, auth.platformCode, path.id, claim),
);

export const handler = onLambda(bind);
