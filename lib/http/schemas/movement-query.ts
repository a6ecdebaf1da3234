import * as z from 'zod/mini';
import { queryFilter } from '../zod.js';

/** A time bound: UNIX milliseconds. */
const timestamp = () =>
  z.pipe(
    z.string().check(z.regex(/^\d{1,16}$/, 'must be a UNIX timestamp in milliseconds')),
    z.transform((text) => Number(text)),
  );

/** The filters both movement lists take (the per-account list has its account in the path). */
export const movementQueryFields = {
  participant_code: queryFilter(50),
  asset: queryFilter(25),
  movement_type: queryFilter(40),
  'movement_timestamp[gt]': z.optional(timestamp()),
  'movement_timestamp[gte]': z.optional(timestamp()),
  'movement_timestamp[lt]': z.optional(timestamp()),
  'movement_timestamp[lte]': z.optional(timestamp()),
};
