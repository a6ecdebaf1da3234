import * as z from 'zod/mini';
import { fundAwards } from '../../lib/awards/fund-awards.js';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { postAwardsFund } from '../../lib/routes.js';
import { claimsInBooking } from '../../lib/http/booking-claims.js';
import { driveQueuedBooking } from '../../lib/ledger/engine.js';
import { amountText, text } from '../../lib/http/zod.js';

// `underlying` or its alias `asset`: the use case decides which was meant and reports both problems at once.
const body = z.object({
  underlying: z.optional(text(25)),
  asset: z.optional(text(25)),
  quoted_currency: text(25),
  quantity: z.optional(amountText()),
  total: z.optional(amountText()),
});

/** POST /awards/fund: buys the asset to award into the platform's `awards` pool. */
export const bind = routeHandler(
  postAwardsFund,
  {
    body,
    successStatus: 201,
    response: async () => (await import('../../lib/http/schemas/quotes.js')).instantPurchaseResponse,
    // It books: a retry of a booking left queued behind a hot account commits the queue.
    queuedBookings: driveQueuedBooking,
    // Every accepted request books, with its claim: the key's check and the request's claims ride in the booking.
    claimsInBooking,
    summary: 'Fund the awards pool',
  },
  async ({ ctx, body, auth, requestId, claim }) => ({
    message: await fundAwards(ctx, auth, body, requestId, claim),
  }),
);

export const handler = onLambda(bind);
