import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { getIndex } from '../../lib/routes.js';
import { queryFilter } from '../../lib/http/zod.js';
import { listIndexPrices } from '../../lib/pricing/list-index-prices.js';

/** GET /index: the reference prices the service quotes from, optionally for one underlying or quoted currency. */
export const bind = routeHandler(
  getIndex,
  {
    query: z.object({ underlying: queryFilter(25), quoted_currency: queryFilter(25) }),
    response: async () => (await import('../../lib/http/schemas/pricing.js')).indexPriceListResponse,
    summary: 'List reference prices',
  },
  async ({ ctx, query }) => listIndexPrices(ctx, query),
);

export const handler = onLambda(bind);
