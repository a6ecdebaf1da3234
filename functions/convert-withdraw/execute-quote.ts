import * as z from 'zod/mini';
import { executeConvertQuote } from '../../lib/convert-withdraw/execute-convert-quote.js';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { postConvertWithdrawExecute } from '../../lib/routes.js';
import { claimsInBooking } from '../../lib/http/booking-claims.js';
import { driveQueuedBooking } from '../../lib/ledger/engine.js';
import { text } from '../../lib/http/zod.js';

const body = z.object({ quote_id: text(100) });

/** POST /convert_withdraw/execute: executes the quote once, booking its trade and a PENDING withdrawal. */
export const bind = routeHandler(
  postConvertWithdrawExecute,
  {
    body,
    response: async () => (await import('../../lib/http/schemas/quotes.js')).convertExecutionResponse,
    // It books: a retry of a booking left queued behind a hot account commits the queue.
    queuedBookings: driveQueuedBooking,
    // Every accepted request books, with its claim: the key's check and the request's claims ride in the booking.
    claimsInBooking,
    summary: 'Execute a convert-and-withdraw quote',
  },
  async ({ ctx, body, auth, claim, receivedAtMs }) => ({
    message: await executeConvertQuote(ctx, auth, body.quote_id, claim, receivedAtMs),
  }),
);

export const handler = onLambda(bind);
