import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { getTime } from '../../lib/routes.js';
import { serverTime } from '../../lib/system/server-time.js';

/** GET /time: server time for clients checking their clock before signing. The only unsigned route. */
export const bind = routeHandler(
  getTime,
  {
    response: async () => (await import('../../lib/http/schemas/system.js')).serverTimeResponse,
    summary: 'Server time',
  },
  async ({ ctx }) => ({ message: serverTime(ctx) }),
);

export const handler = onLambda(bind);
