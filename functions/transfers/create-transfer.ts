import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { postTransfers } from '../../lib/routes.js';
import { claimsInBooking } from '../../lib/http/booking-claims.js';
import { driveQueuedBooking } from '../../lib/ledger/engine.js';
import { accountLabelField, amountText, text } from '../../lib/http/zod.js';
import { createTransfer } from '../../lib/transfers/create-transfer.js';

const body = z.object({
  client_transfer_id: z.optional(text(100)),
  from_participant_code: text(50),
  from_account_group: z.optional(text(50)),
  from_account_label: accountLabelField(),
  to_participant_code: text(50),
  to_account_group: z.optional(text(50)),
  to_account_label: accountLabelField(),
  asset: text(25),
  amount: amountText(),
});

/** POST /transfers: move an asset between accounts the platform may act for. */
export const bind = routeHandler(
  postTransfers,
  {
    body,
    successStatus: 201,
    response: async () => (await import('../../lib/http/schemas/transfers.js')).transferResponse,
    // It books: a retry of a booking left queued behind a hot account commits the queue.
    queuedBookings: driveQueuedBooking,
    // Every accepted request books, with its claim: the key's check rides in the booking's transaction.
    claimsInBooking,
    summary: 'Create a transfer',
  },
  async ({ ctx, body, auth, claim }) => ({
    message: await createTransfer(ctx, auth.platformCode, body, claim),
  }),
);

export const handler = onLambda(bind);
