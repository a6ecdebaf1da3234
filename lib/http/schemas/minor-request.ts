import * as z from 'zod/mini';
import { ADULT_AGE_YEARS, minorRequestSchema } from '../../domain/customer-request.js';

// The body of POST /participants/customers/minor as the API description shows it, as `customer-request.ts`
// does the adult's. The request time only moves the time rules' windows, which the description does not show.
const ANY_TIME_MS = 0;

export const minorRequest = minorRequestSchema(ANY_TIME_MS).check(
  z.meta({
    id: 'MinorRequest',
    description: `A minor (under ${ADULT_AGE_YEARS} on the request day) with a custodian. Every problem is reported at once.`,
  }),
);
