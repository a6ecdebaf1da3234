import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { getWebhooksEndpointsId } from '../../lib/routes.js';
import { getEndpointView } from '../../lib/webhooks/manage-endpoints.js';

/** GET /webhooks/endpoints/{id}: one of the platform's endpoints. */
export const bind = routeHandler(
  getWebhooksEndpointsId,
  {
    path: z.object({ id: z.string().check(z.maxLength(100)) }),
    response: async () => (await import('../../lib/http/schemas/webhooks.js')).endpointResponse,
    summary: 'Get a webhook endpoint',
  },
  async ({ ctx, path, auth }) => getEndpointView(ctx, auth.platformCode, path.id),
);

export const handler = onLambda(bind);
