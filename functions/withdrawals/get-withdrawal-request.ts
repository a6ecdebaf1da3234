import * as z from 'zod/mini';
import { apiHandler } from '../../lib/http/api-handler.js';
import { getWithdrawalOfPlatform } from '../../lib/withdrawals/get-withdrawal.js';

/** GET /withdrawals/requests/{id}: one of the platform's withdrawal requests (from convert-withdraw executions). */
export const handler = apiHandler({ path: z.object({ id: z.string().check(z.maxLength(100, 'must be a withdrawal request id (a UUID)')) }) }, async ({ path, auth }) =>
  getWithdrawalOfPlatform(auth.platformCode, path.id),
);
