import { onLambda } from '../../lib/edge.js';
import { apiHandler } from '../../lib/http/api-handler.js';
import { serverTime } from '../../lib/system/server-time.js';

/** GET /time: server time for clients checking their clock before signing. The only unsigned route. */
export const bind = apiHandler(
  {
    response: async () => (await import('../../lib/http/schemas/system.js')).serverTimeResponse,
    summary: 'Server time',
  },
  async ({ ctx }) => ({ message: serverTime(ctx) }),
);

export const handler = onLambda(bind);
