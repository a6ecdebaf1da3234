import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { getWebhooksEndpoints } from '../../lib/routes.js';
import { listEndpoints } from '../../lib/webhooks/manage-endpoints.js';

/** GET /webhooks/endpoints: the platform's endpoints (at most 20), oldest first, with why any is disabled. */
export const bind = routeHandler(
  getWebhooksEndpoints,
  {
    response: async () => (await import('../../lib/http/schemas/webhooks.js')).endpointListResponse,
    summary: 'List webhook endpoints',
  },
  async ({ ctx, auth }) => listEndpoints(ctx, auth.platformCode),
);

export const handler = onLambda(bind);
