import * as z from 'zod/mini';
import { integer } from '../entity/attributes.js';
import { defineEntity } from '../entity/entity.js';

/**
 * The network fee a withdrawal of an asset costs on its chain, in units of that asset (fixed-point text with
 * its decimals), set by ops; a convert-withdraw quote copies it. One item per asset, overwritten in place.
 */
export const networkFeeEntity = defineEntity({
  type: 'network_fee',
  table: 'main',
  schema: z.object({
    asset: z.string(),
    quantity: z.string(),
    updated_at: integer,
  }),
  key: { pk: 'NETWORK_FEE#{asset}', sk: 'NETWORK_FEE' },
});
