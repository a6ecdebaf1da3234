import * as z from 'zod/mini';
import { apiHandler } from '../../lib/http/api-handler.js';
import { findTransfer } from '../../lib/transfers/list-transfers.js';
import { transferResponse } from '../../lib/http/schemas/transfers.js';

/** GET /transfers/{id}: one of the platform's transfers. */
export const handler = apiHandler(
  { path: z.object({ id: z.string().check(z.maxLength(100)) }), response: transferResponse, summary: 'Get a transfer' },
  async ({ path, auth }) => findTransfer(auth.platformCode, path.id),
);
