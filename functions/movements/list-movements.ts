import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { getMovements } from '../../lib/routes.js';
import { pageQuery, queryFilter } from '../../lib/http/zod.js';
import { listMovements } from '../../lib/movements/list-movements.js';
import { movementQueryFields } from '../../lib/http/schemas/movement-query.js';

const query = z.object({ account_id: queryFilter(40), ...movementQueryFields, ...pageQuery(100) });

/**
 * GET /movements: the movements on the platform's and its customers' accounts, newest first; filters
 * `account_id`, `participant_code`, `asset`, `movement_type`, and `movement_timestamp[gt|gte|lt|lte]` (ms).
 */
export const bind = routeHandler(
  getMovements,
  {
    query,
    response: async () => (await import('../../lib/http/schemas/movements.js')).movementListResponse,
    summary: 'List movements',
  },
  async ({ ctx, query, auth }) => listMovements(ctx, auth.platformCode, query),
);

export const handler = onLambda(bind);
