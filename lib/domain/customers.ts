import {
  customerRequestSchema as customerRequestSchemaWith,
  type NormalizedCustomer,
  type ValidationResult,
  validateCustomerWith,
} from './customer-request.js';
import { ValidationError } from './errors.js';
import { parsePhoneNumber } from './phone-numbers.js';

/**
 * The customer onboarding rules (`customer-request.ts`) with the phone parser loaded with them, for callers
 * that validate synchronously: the API description's schemas, the benchmark's seeding and the tests. The
 * functions import `customer-request.ts` instead: the parser is about 50 KiB of a bundle, which create-customer
 * loads only for a body with a phone number (`lib/participants/create-customer.ts`).
 */

export {
  ADULT_AGE_YEARS,
  ageInYearsOn,
  type CustodianRelationship,
  type IdNumberType,
  isPoBoxAddress,
  MAX_TEXT_LENGTH,
  minorRequestSchema,
  type NormalizedCustomer,
  type NormalizedMinor,
  SCREENING_RESULTS,
  type ScreeningResult,
  type ValidationResult,
  validateMinor,
} from './customer-request.js';

/** The body of `POST /participants/customers/new` for a request at `nowMs` (`customer-request.ts`). */
export function customerRequestSchema(nowMs: number) {
  return customerRequestSchemaWith(nowMs, parsePhoneNumber);
}

/** `POST /participants/customers/new`: every problem with `body`, or the normalised customer. */
export function validateCustomer(body: unknown, nowMs: number): ValidationResult<NormalizedCustomer> {
  return validateCustomerWith(body, nowMs, parsePhoneNumber);
}

/** As `validateCustomer`, throwing `ValidationError` with all problems instead of returning them. */
export function parseCustomer(body: unknown, nowMs: number): NormalizedCustomer {
  const result = validateCustomer(body, nowMs);
  if (!result.ok) throw new ValidationError(result.errors);
  return result.value;
}
