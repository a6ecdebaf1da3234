import { apiHandler } from '../../lib/http/api-handler.js';
import { serverTime } from '../../lib/system/server-time.js';

/** GET /time: server time for clients checking their clock before signing. The only unsigned route. */
export const handler = apiHandler({}, async () => ({ message: serverTime() }));
