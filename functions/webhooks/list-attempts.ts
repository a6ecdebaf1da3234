import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { getWebhooksEndpointsIdAttempts } from '../../lib/routes.js';
import { pageQuery } from '../../lib/http/zod.js';
import { listAttempts } from '../../lib/webhooks/list-attempts.js';

/** GET /webhooks/endpoints/{id}/attempts: the endpoint's delivery attempts, oldest first. */
export const bind = routeHandler(
  getWebhooksEndpointsIdAttempts,
  {
    query: z.object({ ...pageQuery(100) }),
    path: z.object({ id: z.string().check(z.maxLength(100)) }),
    response: async () => (await import('../../lib/http/schemas/webhooks.js')).attemptListResponse,
    summary: 'List delivery attempts',
  },
  async ({ ctx, query, path, auth }) => listAttempts(ctx, auth.platformCode, path.id, query),
);

export const handler = onLambda(bind);
