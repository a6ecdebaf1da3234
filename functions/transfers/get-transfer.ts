import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { getTransfersId } from '../../lib/routes.js';
import { findTransfer } from '../../lib/transfers/list-transfers.js';

/** GET /transfers/{id}: one of the platform's transfers. */
export const bind = routeHandler(
  getTransfersId,
  {
    path: z.object({ id: z.string().check(z.maxLength(100)) }),
    response: async () => (await import('../../lib/http/schemas/transfers.js')).transferResponse,
    summary: 'Get a transfer',
  },
  async ({ ctx, path, auth }) => findTransfer(ctx, auth.platformCode, path.id),
);

export const handler = onLambda(bind);
