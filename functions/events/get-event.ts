import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { EVENT_VISIBILITY_DESCRIPTION } from '../../lib/events/visibility.js';
import { findEvent } from '../../lib/events/events-api.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { getEventsId } from '../../lib/routes.js';

/** GET /events/{id}: one of the platform's events, as it is delivered. */
export const bind = routeHandler(
  getEventsId,
  {
    path: z.object({ id: z.string().check(z.maxLength(100)) }),
    response: async () => (await import('../../lib/http/schemas/webhooks.js')).eventResponse,
    summary: 'Get an event',
    description: EVENT_VISIBILITY_DESCRIPTION,
  },
  async ({ ctx, path, auth }) => findEvent(ctx, auth, path.id),
);

export const handler = onLambda(bind);
