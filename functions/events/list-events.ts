import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { EVENT_VISIBILITY_DESCRIPTION } from '../../lib/events/visibility.js';
import { listEvents } from '../../lib/events/list-events.js';
import { apiHandler } from '../../lib/http/api-handler.js';
import { pageQuery, queryFilter } from '../../lib/http/zod.js';

const query = z.object({
  type: queryFilter(60),
  resource_id: queryFilter(100),
  created_after: queryFilter(20),
  ...pageQuery(100),
});

/** GET /events: the platform's events of the last 30 days, oldest first, by cursor. */
export const bind = apiHandler(
  {
    query,
    response: async () => (await import('../../lib/http/schemas/webhooks.js')).eventListResponse,
    summary: 'List events',
    description: EVENT_VISIBILITY_DESCRIPTION,
  },
  async ({ ctx, query, auth }) => listEvents(ctx, auth, query),
);

export const handler = onLambda(bind);
