import { assetsMatching } from '../../lib/assets/list-assets.js';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { getAssets } from '../../lib/routes.js';
import * as z from 'zod/mini';

/** GET /assets: the asset registry, optionally one symbol. */
export const bind = routeHandler(
  getAssets,
  {
    response: async () => (await import('../../lib/http/schemas/assets.js')).assetListResponse,
    summary: 'List assets',
    query: z.object({ symbol: z.optional(z.string().check(z.minLength(1), z.maxLength(25))) }),
  },
  async ({ ctx, query }) => ({
    message: assetsMatching(query.symbol),
  }),
);

export const handler = onLambda(bind);
