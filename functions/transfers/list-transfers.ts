import * as z from 'zod/mini';
import { apiHandler } from '../../lib/http/api-handler.js';
import { pageQuery } from '../../lib/http/zod.js';
import { listTransfers } from '../../lib/transfers/list-transfers.js';

const query = z.object({
  client_transfer_id: z.optional(z.string()),
  from_participant_code: z.optional(z.string()),
  to_participant_code: z.optional(z.string()),
  from_account_group: z.optional(z.string()),
  to_account_group: z.optional(z.string()),
  from_account_label: z.optional(z.string()),
  to_account_label: z.optional(z.string()),
  asset: z.optional(z.string()),
  ...pageQuery(100),
});

/** GET /transfers: the platform's transfers, newest first. */
export const handler = apiHandler({ query }, async ({ query, auth }) => listTransfers(auth.platformCode, query));
