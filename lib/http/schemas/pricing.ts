import * as z from 'zod/mini';
import { amount, described, epochMs, messageOf } from './common.js';

const indexPriceSchema = z
  .object({
    underlying: z.string(),
    quoted_currency: z.string(),
    symbol: described(z.string(), '`UNDERLYING/QUOTED`.'),
    price: amount('The reference price, before any platform spread.'),
    timestamp: epochMs('When it was observed'),
    fresh: described(z.boolean(), 'Whether it is recent enough to quote on (PRICE_MAX_AGE_SECONDS).'),
  })
  .check(z.meta({ id: 'IndexPrice' }));

export const indexPriceListResponse = messageOf(z.array(indexPriceSchema));
