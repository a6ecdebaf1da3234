import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { deleteWebhooksEndpointsId } from '../../lib/routes.js';
import { removeEndpoint } from '../../lib/webhooks/manage-endpoints.js';

/** DELETE /webhooks/endpoints/{id}: the endpoint gets nothing more. */
export const bind = routeHandler(
  deleteWebhooksEndpointsId,
  {
    path: z.object({ id: z.string().check(z.maxLength(100)) }),
    response: async () => (await import('../../lib/http/schemas/webhooks.js')).endpointDeletedResponse,
    summary: 'Delete a webhook endpoint',
  },
  async ({ ctx, path, auth }) => removeEndpoint(ctx, auth.platformCode, path.id),
);

export const handler = onLambda(bind);
