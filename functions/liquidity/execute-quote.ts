import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { postLiquidityExecute } from '../../lib/routes.js';
import { claimsInBooking } from '../../lib/http/booking-claims.js';
import { driveQueuedBooking } from '../../lib/ledger/engine.js';
import { text } from '../../lib/http/zod.js';
import { executeQuote } from '../../lib/liquidity/execute-quote.js';

const body = z.object({
  quote_id: text(100),
  // Either grouping, checked by the domain rules so both groupings' problems come back together.
  funding_details: z.optional(z.unknown()),
});

/** POST /liquidity/execute: executes a quote once, with its balances, trade and (ACH) payment. */
export const bind = routeHandler(
  postLiquidityExecute,
  {
    body,
    response: async () => (await import('../../lib/http/schemas/quotes.js')).executionResponse,
    // It books: a retry of a booking left queued behind a hot account commits the queue.
    queuedBookings: driveQueuedBooking,
    // Every accepted request books, with its claim: the key's check and the request's claims ride in the booking.
    claimsInBooking,
    summary: 'Execute a quote',
  },
  async ({ ctx, body, auth, claim, receivedAtMs }) => ({
    message: await executeQuote(ctx, auth, body, claim, receivedAtMs),
  }),
);

export const handler = onLambda(bind);
