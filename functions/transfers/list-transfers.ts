import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { getTransfers } from '../../lib/routes.js';
import { accountLabelField, pageQuery, queryFilter } from '../../lib/http/zod.js';
import { listTransfers } from '../../lib/transfers/list-transfers.js';

const query = z.object({
  client_transfer_id: queryFilter(),
  from_participant_code: queryFilter(),
  to_participant_code: queryFilter(),
  from_account_group: queryFilter(),
  to_account_group: queryFilter(),
  from_account_label: accountLabelField(),
  to_account_label: accountLabelField(),
  asset: queryFilter(),
  ...pageQuery(100),
});

/** GET /transfers: the platform's transfers, newest first. */
export const bind = routeHandler(
  getTransfers,
  {
    query,
    response: async () => (await import('../../lib/http/schemas/transfers.js')).transferListResponse,
    summary: 'List transfers',
  },
  async ({ ctx, query, auth }) => listTransfers(ctx, auth.platformCode, query),
);

export const handler = onLambda(bind);
