import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { postRewards } from '../../lib/routes.js';
import { claimsInBooking } from '../../lib/http/booking-claims.js';
import { driveQueuedBooking } from '../../lib/ledger/engine.js';
import { accountLabelField, amountText, text } from '../../lib/http/zod.js';
import { issueReward } from '../../lib/rewards/issue-reward.js';

// Amounts stay plain strings here so the use case reports every problem (both amounts, precision) in one list.
const body = z.object({
  underlying: text(25),
  quoted_currency: text(25),
  quantity: z.optional(amountText()),
  total: z.optional(amountText()),
  participant_code: text(50),
  account_label: accountLabelField(),
});

/** POST /rewards: buys an asset for one customer, paid by the platform; idempotent with X-Request-Id. */
export const bind = routeHandler(
  postRewards,
  {
    body,
    successStatus: 201,
    response: async () => (await import('../../lib/http/schemas/quotes.js')).instantPurchaseResponse,
    // It books: a retry of a booking left queued behind a hot account commits the queue.
    queuedBookings: driveQueuedBooking,
    // Every accepted request books, with its claim: the key's check and the request's claims ride in the booking.
    claimsInBooking,
    summary: 'Issue a reward',
  },
  async ({ ctx, body, auth, requestId, claim }) => ({
    message: await issueReward(ctx, auth, body, requestId, claim),
  }),
);

export const handler = onLambda(bind);
