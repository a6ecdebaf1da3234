import * as z from 'zod/mini';
import { requestConvertQuote } from '../../lib/convert-withdraw/request-convert-quote.js';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { getConvertWithdrawRfq } from '../../lib/routes.js';
import { accountLabelField, amountText, text } from '../../lib/http/zod.js';

// The side, amounts and address stay plain strings here so the use case reports every problem in one list.
const query = z.object({
  side: text(10),
  underlying: text(25),
  quoted_currency: text(25),
  withdrawal_address: text(200),
  quantity: z.optional(amountText()),
  total: z.optional(amountText()),
  participant_code: z.optional(text(50)),
  account_label: accountLabelField(),
});

/** GET /convert_withdraw/rfq: a buy quote with the network fee of a withdrawal to the given address. */
export const bind = routeHandler(
  getConvertWithdrawRfq,
  {
    query,
    response: async () => (await import('../../lib/http/schemas/quotes.js')).convertQuoteResponse,
    summary: 'Request a convert-and-withdraw quote',
  },
  async ({ ctx, query, auth, requestId }) => ({ message: await requestConvertQuote(ctx, auth, query, requestId) }),
);

export const handler = onLambda(bind);
