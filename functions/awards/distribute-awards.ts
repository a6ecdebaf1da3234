import * as z from 'zod/mini';
import { distributeAwards } from '../../lib/awards/distribute-awards.js';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { postAwardsDistribute } from '../../lib/routes.js';
import { driveQueuedBooking } from '../../lib/ledger/engine.js';
import { amountText, text } from '../../lib/http/zod.js';

// The amount stays a string and the list unbounded here: the use case checks precision, size and
// duplicates together, so every problem comes back in one response.
const body = z.object({
  asset: text(25),
  quantity: amountText(),
  participant_codes: z.array(text(50)),
  quoted_currency: z.optional(text(25)),
});

/** POST /awards/distribute: `quantity` of the pooled asset to each listed customer, resumable by X-Request-Id. */
export const bind = routeHandler(
  postAwardsDistribute,
  {
    body,
    successStatus: 201,
    response: async () => (await import('../../lib/http/schemas/quotes.js')).distributionResponse,
    // It books: a retry of a booking left queued behind a hot account commits the queue.
    queuedBookings: driveQueuedBooking,
    summary: 'Distribute awards',
  },
  async ({ ctx, body, auth, requestId, claim }) => ({
    message: await distributeAwards(ctx, auth, body, requestId, claim),
  }),
);

export const handler = onLambda(bind);
