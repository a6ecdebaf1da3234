import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { postWebhooksEndpointsIdRotateSecret } from '../../lib/routes.js';
import { rotateSecret } from '../../lib/webhooks/manage-endpoints.js';

/** POST /webhooks/endpoints/{id}/rotate_secret: a new secret (shown once); the old one signs beside it for 24 hours. */
export const bind = routeHandler(
  postWebhooksEndpointsIdRotateSecret,
  {
    path: z.object({ id: z.string().check(z.maxLength(100)) }),
    response: async () => (await import('../../lib/http/schemas/webhooks.js')).rotatedEndpointResponse,
    summary: 'Rotate a webhook endpoint secret',
    secretInResponse: true,
  },
  async ({ ctx, path, auth, claim }) => rotateSecret(ctx, auth.platformCode, path.id, claim),
);

export const handler = onLambda(bind);
