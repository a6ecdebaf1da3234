import type { NormalizedCustomer, NormalizedMinor, ValidationResult } from '../domain/customer-request.js';
import { isValidEmail, normaliseEmail } from '../domain/email.js';
import { maskedTaxId } from '../domain/tax-ids.js';
import { ConflictError, ValidationError } from '../domain/errors.js';
import { customerCodeByEmail, EMAIL_TAKEN, type Participant } from '../store/participants.js';
import { readInteger } from '../store/table/integers.js';
import type { AppContext } from '../context.js';

/**
 * The request fields a customer response echoes, in the spec's table order. Derived fields
 * (`email_normalized`, `country_alpha2`, `state_code`) and anything else a client sent are never echoed.
 */
const MINOR_FIELDS = [
  'first_name',
  'last_name',
  'email',
  'address_one',
  'address_two',
  'city',
  'state',
  'zip',
  'country',
  'date_of_birth',
  'id_number_type',
  'id_number',
  'non_us_other_type',
  'id_issuing_authority',
  'utma_signed_timestamp',
  'custodian_participant_code',
  'custodian_relationship',
] as const;
/**
 * An adult also takes the reference API's US vocabulary. `tax_id` is answered from its
 * last four characters only (`tax_id_last4`), never the number.
 */
const ADULT_FIELDS = [
  'first_name',
  'middle_name',
  'last_name',
  'email',
  'phone_number',
  'address_one',
  'address_two',
  'city',
  'state',
  'zip',
  'postal_code',
  'country',
  'jurisdiction_code',
  'citizenship_code',
  'tax_id',
  'date_of_birth',
  'id_number_type',
  'id_number',
  'non_us_other_type',
  'id_issuing_authority',
  'signed_timestamp',
  'kyc',
  'kyc_timestamp',
  'sanction_screening',
  'sanction_screening_timestamp',
] as const;
const TIMESTAMP_FIELDS: ReadonlySet<string> = new Set([
  'signed_timestamp',
  'utma_signed_timestamp',
  'kyc_timestamp',
  'sanction_screening_timestamp',
]);

/**
 * Every field of the customer's kind, as given, and null when it was not (an optional field
 * with no value is null, the same in every response that has it).
 */
function echoFields(source: Record<string, unknown>, names: readonly string[]): Record<string, unknown> {
  const echo: Record<string, unknown> = {};
  for (const name of names) {
    if (name === 'tax_id') {
      echo.tax_id = typeof source.tax_id_last4 === 'string' ? maskedTaxId(source.tax_id_last4) : null;
    } else if (source[name] === undefined || source[name] === null) {
      echo[name] = null;
    } else {
      echo[name] = TIMESTAMP_FIELDS.has(name) ? readInteger(source[name]) : source[name];
    }
  }
  return echo;
}

/** The echo of a customer just accepted: its known fields as the client sent them (trimmed), null when not sent. */
export function echoCustomer(customer: NormalizedCustomer | NormalizedMinor): Record<string, unknown> {
  const names = 'custodian_participant_code' in customer ? MINOR_FIELDS : ADULT_FIELDS;
  const echo = echoFields(customer as unknown as Record<string, unknown>, names);
  echo.metadata = customer.metadata ?? null;
  return echo;
}

/** The same echo rebuilt from a stored customer (its metadata kept as JSON text). */
export function echoStoredCustomer(customer: Participant): Record<string, unknown> {
  const echo = echoFields(customer, customer.is_minor === true ? MINOR_FIELDS : ADULT_FIELDS);
  echo.metadata = customer.metadata_json === undefined ? null : JSON.parse(customer.metadata_json);
  return echo;
}

/**
 * Whether the e-mail in `body` (when it is a well-formed address) already belongs to a customer of the
 * platform. Read up front so a duplicate is listed with the body's other problems; the transaction's own
 * condition stays the authority under concurrency.
 */
export async function emailAlreadyUsed(ctx: AppContext, platformCode: string, body: unknown): Promise<boolean> {
  const email = (body as { email?: unknown } | null)?.email;
  if (typeof email !== 'string' || !isValidEmail(email.trim())) return false;
  return (await customerCodeByEmail(ctx, platformCode, normaliseEmail(email))) !== undefined;
}

/**
 * Turns the pure verdict plus the store-dependent findings into the outcome. Any problem with the request
 * itself is a 400 listing everything (pure rules first, then store rules, then a taken e-mail). A request
 * whose only problem is that its e-mail is taken is a 409: it is valid, it just lost to an existing
 * customer, the same answer a concurrent twin gets from the transaction.
 */
export function acceptOrThrow<T>(
  verdict: ValidationResult<T>,
  storeProblems: readonly string[],
  emailTaken: boolean,
): T {
  const problems = [...(verdict.ok ? [] : verdict.errors), ...storeProblems];
  if (problems.length > 0) throw new ValidationError(emailTaken ? [...problems, EMAIL_TAKEN] : problems);
  if (emailTaken) throw new ConflictError([EMAIL_TAKEN]);
  if (!verdict.ok) throw new Error('unreachable: a failed verdict always carries errors');
  return verdict.value;
}
