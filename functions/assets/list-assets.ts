import { z } from 'zod';
import { assetsMatching } from '../../lib/assets/list-assets.js';
import { apiHandler } from '../../lib/http/api-handler.js';

/** GET /assets: the asset registry, optionally one symbol. */
export const handler = apiHandler({ query: z.object({ symbol: z.string().min(1).max(25).optional() }) }, async ({ query }) => ({
  message: assetsMatching(query.symbol),
}));
