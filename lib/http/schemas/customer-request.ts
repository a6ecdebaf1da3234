import * as z from 'zod/mini';
import { ADULT_AGE_YEARS, customerRequestSchema } from '../../domain/customers.js';

// The body of POST /participants/customers/new as the API description shows it: the very schema the handler
// validates with (`validateCustomerWith`), its field descriptions and limits included, under the id the
// description lists it by. The rules spanning fields (US state and zip, ID type and country, tax id) are
// checks the JSON Schema does not show; the descriptions say them. The minor's body has a module of its own
// (`minor-request.ts`), so neither function's bundle builds the other's fields.

// The request time only moves the time rules' windows, which the description does not show: any time will do.
const ANY_TIME_MS = 0;

export const customerRequest = customerRequestSchema(ANY_TIME_MS).check(
  z.meta({
    id: 'CustomerRequest',
    description: `An adult customer (${ADULT_AGE_YEARS} or older on the request day). Every problem is reported at once.`,
  }),
);
