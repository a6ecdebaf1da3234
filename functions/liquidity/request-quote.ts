import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { getLiquidityRfq } from '../../lib/routes.js';
import { accountLabelField, amountText, text } from '../../lib/http/zod.js';
import { requestQuote } from '../../lib/liquidity/request-quote.js';

// Amounts and the side stay plain strings here so the use case reports every problem in one list.
// The JSON-body form (`POST /liquidity/rfq`) takes the very same fields.
export const quoteRequestFields = z.object({
  side: text(10),
  underlying: text(25),
  quoted_currency: text(25),
  quantity: z.optional(amountText()),
  total: z.optional(amountText()),
  participant_code: z.optional(text(50)),
  account_label: accountLabelField(),
});

/** GET /liquidity/rfq: a quote for the platform or one of its customers, valid for QUOTE_TTL_SECONDS. */
export const bind = routeHandler(
  getLiquidityRfq,
  {
    query: quoteRequestFields,
    response: async () => (await import('../../lib/http/schemas/quotes.js')).quoteResponse,
    summary: 'Request a quote',
  },
  async ({ ctx, query, auth, requestId }) => ({ message: await requestQuote(ctx, auth, query, requestId) }),
);

export const handler = onLambda(bind);
