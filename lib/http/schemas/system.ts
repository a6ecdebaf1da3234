import * as z from 'zod/mini';
import { described, epochMs, isoInstant, messageOf } from './common.js';

export const serverTimeResponse = messageOf(
  z.object({
    epoch: described(z.int(), 'Server time in UNIX seconds, what X-SVC-TIMESTAMP carries.'),
    epoch_ms: epochMs('Server time'),
    iso_8601: isoInstant('Server time, ISO 8601 UTC.'),
  }),
);
