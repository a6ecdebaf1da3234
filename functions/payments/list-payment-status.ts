import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { getPaymentsStatus } from '../../lib/routes.js';
import { cursorParameter, pageNumber, queryFilter, text } from '../../lib/http/zod.js';
import { listPayments } from '../../lib/payments/list-payments.js';

/** UNIX seconds; the bound keeps `seconds * 1000` inside the 15-digit sort keys of the payment index. */
const unixSeconds = () =>
  z.optional(
    z.coerce
      .number()
      .check(
        z.int('must be a whole number of seconds'),
        z.minimum(0, 'must not be negative'),
        z.maximum(99_999_999_999, 'is too far in the future'),
      ),
  );

const query = z.object({
  start_date: unixSeconds(),
  end_date: unixSeconds(),
  // Bounded like every participant code we take: it becomes a DynamoDB key, which refuses long values.
  participant: z.optional(text(50)),
  transaction_id: queryFilter(),
  trade_id: queryFilter(),
  status: queryFilter(),
  page: pageNumber(1),
  cursor: cursorParameter(),
  // The spec's sample shows 200 to a page; that is the default and the maximum here.
  size: pageNumber(200, 200),
});

/** GET /payments/status: the platform's ACH payment transactions, newest first. */
export const bind = routeHandler(
  getPaymentsStatus,
  {
    query,
    response: async () => (await import('../../lib/http/schemas/payments.js')).paymentListResponse,
    summary: 'List ACH payments',
  },
  async ({ ctx, query, auth }) => listPayments(ctx, auth.platformCode, query),
);

export const handler = onLambda(bind);
