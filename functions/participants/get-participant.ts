import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { getParticipantsEmail } from '../../lib/routes.js';
import { getParticipantByEmail } from '../../lib/participants/get-participant.js';

/** GET /participants/{email}: one of the platform's customers, found by e-mail (the reference API's lookup). */
export const bind = routeHandler(
  getParticipantsEmail,
  {
    path: z.object({ email: z.string().check(z.maxLength(400, 'must be a valid e-mail address')) }),
    response: async () => (await import('../../lib/http/schemas/participants.js')).participantResponse,
    summary: 'Get a customer by e-mail',
  },
  async ({ ctx, path, auth }) => getParticipantByEmail(ctx, auth.platformCode, path.email),
);

export const handler = onLambda(bind);
