import * as z from 'zod/mini';
import { integer } from '../entity/attributes.js';
import { defineEntity } from '../entity/entity.js';

/**
 * The reference price of a pair (set by ops or a feed): the mid price before any platform's spread, as its
 * exact decimal text (never summed in DynamoDB, and a number attribute would cap it at 38 digits), with when
 * it was observed (`updated_at`, ms). One item per pair, overwritten in place.
 */
export const priceEntity = defineEntity({
  type: 'price',
  table: 'main',
  schema: z.object({
    underlying: z.string(),
    quoted_currency: z.string(),
    price: z.string(),
    updated_at: integer,
  }),
  key: { pk: 'PRICE#{underlying}#{quoted_currency}', sk: 'PRICE' },
});
