import * as z from 'zod/mini';
import { ADULT_AGE_YEARS, customerRequestSchema, minorRequestSchema } from '../../domain/customers.js';

// The bodies of POST /participants/customers/new and /minor as the API description shows them: the very
// schemas the handlers validate with (`validateCustomer`, `validateMinor`), their field descriptions and
// limits included, under the ids the description lists them by. The rules spanning fields (US state and zip,
// ID type and country, tax id) are checks the JSON Schema does not show; the descriptions say them.

// The request time only moves the time rules' windows, which the description does not show: any time will do.
const ANY_TIME_MS = 0;

export const customerRequest = customerRequestSchema(ANY_TIME_MS).check(
  z.meta({
    id: 'CustomerRequest',
    description: `An adult customer (${ADULT_AGE_YEARS} or older on the request day). Every problem is reported at once.`,
  }),
);

export const minorRequest = minorRequestSchema(ANY_TIME_MS).check(
  z.meta({
    id: 'MinorRequest',
    description: `A minor (under ${ADULT_AGE_YEARS} on the request day) with a custodian. Every problem is reported at once.`,
  }),
);
