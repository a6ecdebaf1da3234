import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { EVENT_VISIBILITY_DESCRIPTION } from '../../lib/events/visibility.js';
import { CATCH_UP_OVERLAP_MS, listEvents } from '../../lib/events/list-events.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { getEvents } from '../../lib/routes.js';
import { pageQuery, queryFilter } from '../../lib/http/zod.js';

const query = z.object({
  type: queryFilter(60),
  resource_id: queryFilter(100),
  created_after: z.optional(
    z
      .string()
      .check(
        z.maxLength(20, 'must be at most 20 characters'),
        z.describe(
          'UNIX milliseconds: catch up from the created_at of the last event you applied. The list starts ' +
            `${CATCH_UP_OVERLAP_MS / 60_000} minutes ` +
            'before it (an event can show after later ones: its change committed later, the index is eventually ' +
            'consistent), so events you have seen come again: skip the ids you have applied.',
        ),
      ),
  ),
  ...pageQuery(100),
});

/** GET /events: the platform's events of the last 30 days, oldest first, by cursor. */
export const bind = routeHandler(
  getEvents,
  {
    query,
    response: async () => (await import('../../lib/http/schemas/webhooks.js')).eventListResponse,
    summary: 'List events',
    description: EVENT_VISIBILITY_DESCRIPTION,
  },
  async ({ ctx, query, auth }) => listEvents(ctx, auth, query),
);

export const handler = onLambda(bind);
