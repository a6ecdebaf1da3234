import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { postLiquidityRfq } from '../../lib/routes.js';
import { requestQuote } from '../../lib/liquidity/request-quote.js';
import { quoteRequestFields } from './request-quote.js';

/**
 * POST /liquidity/rfq: the reference API's JSON-body form of the quote, with the same fields and rules as
 * GET /liquidity/rfq; 201, as the reference answers it. The reference's extra inputs (fees,
 * payment_processor, settlement_type) are for products not offered here and are ignored like any unknown field.
 */
export const bind = routeHandler(
  postLiquidityRfq,
  {
    body: quoteRequestFields,
    successStatus: 201,
    response: async () => (await import('../../lib/http/schemas/quotes.js')).quoteResponse,
    summary: 'Request a quote (JSON body)',
  },
  async ({ ctx, body, auth, requestId, claim }) => ({
    message: await requestQuote(ctx, auth, body, requestId, claim),
  }),
);

export const handler = onLambda(bind);
