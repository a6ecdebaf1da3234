import * as z from 'zod/mini';
import { described, messageOf } from './common.js';

const assetSchema = z
  .object({
    symbol: described(z.string(), 'Ticker, e.g. `BTC`.'),
    name: z.string(),
    type: z.enum(['fiat', 'crypto']),
    precision: described(z.int().check(z.minimum(0)), 'Decimal places an amount of this asset may have.'),
    network: described(z.nullable(z.string()), 'The chain a withdrawal address must belong to; null for fiat.'),
    stablecoin: z.boolean(),
  })
  .check(z.meta({ id: 'Asset' }));

export const assetListResponse = messageOf(z.array(assetSchema));
