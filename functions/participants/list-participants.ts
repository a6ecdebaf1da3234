import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { getParticipants } from '../../lib/routes.js';
import { pageQuery, text } from '../../lib/http/zod.js';
import { listParticipants } from '../../lib/participants/list-participants.js';

/** GET /participants: the caller platform's participants, filtered by e-mail or code, a page at a time. */
export const bind = routeHandler(
  getParticipants,
  {
    response: async () => (await import('../../lib/http/schemas/participants.js')).participantListResponse,
    summary: 'List participants',
    query: z.object({ email: z.optional(text(254)), participant_code: z.optional(text(64)), ...pageQuery(100) }),
  },
  async ({ ctx, query, auth }) => listParticipants(ctx, auth.platformCode, query),
);

export const handler = onLambda(bind);
