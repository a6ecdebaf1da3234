import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { EVENT_VISIBILITY_DESCRIPTION } from '../../lib/events/visibility.js';
import { redeliverEvent } from '../../lib/events/events-api.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { postEventsIdRedeliver } from '../../lib/routes.js';

/** POST /events/{id}/redeliver: send the event again to the platform's endpoints, with the same webhook-id. */
export const bind = routeHandler(
  postEventsIdRedeliver,
  {
    path: z.object({ id: z.string().check(z.maxLength(100)) }),
    response: async () => (await import('../../lib/http/schemas/webhooks.js')).redeliveryResponse,
    summary: 'Redeliver an event',
    description: EVENT_VISIBILITY_DESCRIPTION,
  },
  async ({ ctx, path, auth, claim }) => redeliverEvent(ctx, auth, path.id, claim),
);

export const handler = onLambda(bind);
