import * as z from 'zod/mini';
import { onLambda } from '../../lib/context.js';
import { apiHandler } from '../../lib/http/api-handler.js';
import { endpointResponse } from '../../lib/http/schemas/webhooks.js';
import { getEndpointView } from '../../lib/webhooks/manage-endpoints.js';

/** GET /webhooks/endpoints/{id}: one of the platform's endpoints. */
export const bind = apiHandler({ path: z.object({ id: z.string().check(z.maxLength(100)) }), response: endpointResponse, summary: 'Get a webhook endpoint' }, async ({ ctx, path, auth }) =>
  getEndpointView(ctx, auth.platformCode, path.id),
);

export const handler = onLambda(bind);
