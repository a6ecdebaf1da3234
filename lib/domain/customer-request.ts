// zod/mini, not the classic `zod` entry: classic's `z` namespace defeats tree-shaking and adds ~450 KB
// minified to a bundle; mini brings the same validators in ~10 KB.
import * as z from 'zod/mini';
import {
  ADULT_FIELDS,
  type CustodianRelationship,
  type IdNumberType,
  MINOR_FIELDS,
  type ScreeningResult,
} from './customer-request-fields.js';
import {
  type CustomerRequest,
  customerRules,
  type Derived,
  type PhoneNumberParser,
  type Problem,
  readBody,
} from './customer-request-rules.js';
import { normaliseEmail } from './email.js';
import { taxIdLastFour } from './tax-ids.js';
import { formatIssues } from './validation.js';

/**
 * Onboarding rules for individual customers: adults (who may act as custodians) through
 * `POST /participants/customers/new` and minors through `POST /participants/customers/minor`, one zod schema
 * per body that reports every problem at once, normalises the customer, and describes the body in the API
 * description. Pure: the request time comes in as `nowMs` (the caller passes `ctx.clock.nowMs()`), an adult's
 * phone parser as `parsePhoneNumber` (the function loads it on demand), and checks that need the store (email
 * unique per platform, custodian exists and is an approved adult) are left to the caller. `customers.ts` gives
 * the same with the phone parser loaded at import, for callers that validate synchronously.
 */

export {
  ADULT_AGE_YEARS,
  type CustodianRelationship,
  type IdNumberType,
  isPoBoxAddress,
  MAX_TEXT_LENGTH,
  SCREENING_RESULTS,
  type ScreeningResult,
} from './customer-request-fields.js';
export { ageInYearsOn } from './customer-request-rules.js';
export type { PhoneNumberParser } from './customer-request-rules.js';

/** Fields shared by adults and minors, echoed as the client sent them (trimmed). */
interface CustomerFields {
  first_name: string;
  last_name: string;
  email: string;
  address_one: string;
  address_two?: string;
  city: string;
  state?: string;
  zip?: string;
  country: string;
  date_of_birth: string;
  /** Absent only for an adult US citizen whose tax id is an SSN (see `identityDocumentRule`). */
  id_number_type?: IdNumberType;
  id_number?: string;
  non_us_other_type?: string;
  id_issuing_authority?: string;
  metadata?: Record<string, unknown>;
  /** Lowercased `email`: the key for per-platform uniqueness, which is case-insensitive. */
  email_normalized: string;
  /** ISO 3166-1 alpha-2 of `country`, whatever form the client used. */
  country_alpha2: string;
  /** USPS code of `state`; present only for US addresses. */
  state_code?: string;
}

/** An adult customer, possibly later named as a minor's custodian. */
export interface NormalizedCustomer extends CustomerFields {
  signed_timestamp: number;
  // The reference API's US vocabulary, all optional.
  middle_name?: string;
  postal_code?: string;
  /** ISO 3166-2 as sent (trimmed), e.g. `US-CA`. */
  jurisdiction_code?: string;
  /** ISO alpha-2, upper-cased. */
  citizenship_code?: string;
  /** As sent (trimmed); `phone_e164` is the number in E.164. */
  phone_number?: string;
  phone_e164?: string;
  /**
   * The tax id in its compact form. Plaintext only in memory: the use case encrypts it before the store
   * sees the customer, and responses show `tax_id_last4` only.
   */
  tax_id?: string;
  tax_id_last4?: string;
  kyc?: ScreeningResult;
  kyc_timestamp?: number;
  sanction_screening?: ScreeningResult;
  sanction_screening_timestamp?: number;
}

export interface NormalizedMinor extends CustomerFields {
  // A minor always presents an identity document.
  id_number_type: IdNumberType;
  id_number: string;
  utma_signed_timestamp: number;
  custodian_participant_code: string;
  custodian_relationship: CustodianRelationship;
}

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; errors: string[] };

// ---- the schemas ----------------------------------------------------------------------------------------

type AdultBody = z.output<z.ZodMiniObject<typeof ADULT_FIELDS>>;
type MinorBody = z.output<z.ZodMiniObject<typeof MINOR_FIELDS>>;
/** What the normalised customer reads of a body: its given values, blank and `null` ones left out. */
type Given = ReturnType<typeof readBody<AdultBody>>['given'] | ReturnType<typeof readBody<MinorBody>>['given'];

/**
 * The body of `POST /participants/customers/new` for a request at `nowMs`, its phone number read by
 * `parsePhoneNumber`: every field's own checks, the rules beyond them, and the normalised customer when all
 * hold. The API description is this schema (its input side; the time only moves limits the description does
 * not show).
 */
export function customerRequestSchema(nowMs: number, parsePhoneNumber: PhoneNumberParser) {
  const request: CustomerRequest = { kind: 'adult', nowMs, parsePhoneNumber };
  return z.pipe(
    bodyOf(ADULT_FIELDS, request),
    z.transform((body: AdultBody) => normalisedCustomer(body, request)),
  );
}

/** The body of `POST /participants/customers/minor` for a request at `nowMs`, as `customerRequestSchema`. */
export function minorRequestSchema(nowMs: number) {
  const request: CustomerRequest = { kind: 'minor', nowMs };
  return z.pipe(
    bodyOf(MINOR_FIELDS, request),
    z.transform((body: MinorBody) => normalisedMinor(body, request)),
  );
}

/**
 * An object of `fields` whose other rules run even when some fields failed their own checks, so every
 * problem is listed at once, in the order of `fields` (a fixed order clients and tests can rely on).
 */
function bodyOf<Shape extends z.core.$ZodShape>(fields: Shape, request: CustomerRequest) {
  const order = Object.keys(fields);
  const rules = z.check<Record<string, unknown>>(
    (payload) => {
      const failed = new Set(payload.issues.map((issue) => String(issue.path?.[0])));
      const { problems } = customerRules(readBody(payload.value, failed), request);
      listInOrder(payload.issues, problems, order);
    },
    // Run whatever the fields' own checks found, but only on an object.
    { when: (payload) => isParsedObject(payload.value) },
  );
  return z.object(fields, { error: 'must be a JSON object' }).check(rules);
}

/** What zod's object schema accepted (a failed one leaves the input in place). */
function isParsedObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Adds the rules' `problems` to the fields' own `issues` and sorts them all by field in `order`: a field's
 * own problem first, then what the rules say of it (a problem with `listedWith` sits with that field's).
 */
function listInOrder(issues: z.core.$ZodRawIssue[], problems: readonly Problem[], order: readonly string[]): void {
  const rank = (field: PropertyKey | undefined) => order.indexOf(String(field));
  const ranked = [
    ...issues.map((issue) => ({ issue, rank: rank(issue.path?.[0]) })),
    ...problems.map(({ field, message, listedWith }) => ({
      issue: { code: 'custom' as const, path: [field], message, input: undefined },
      rank: rank(listedWith ?? field),
    })),
  ];
  // A stable sort: within a field, the order the problems were found in.
  ranked.sort((a, b) => a.rank - b.rank);
  issues.splice(0, issues.length, ...ranked.map(({ issue }) => issue));
}

// ---- the normalised customer ------------------------------------------------------------------------------

/** The normalised customer is made of a body whose every check held: no field failed. */
const NOTHING_FAILED: ReadonlySet<string> = new Set();

/** The fields both kinds keep. */
function customerFields(body: AdultBody | MinorBody, given: Given, derived: Derived): CustomerFields {
  return {
    first_name: body.first_name,
    last_name: body.last_name,
    email: body.email,
    address_one: body.address_one,
    ...(given.address_two !== undefined && { address_two: given.address_two }),
    city: body.city,
    // The state as sent; from `jurisdiction_code` alone, its USPS code (`US-IL` -> `IL`), as the country is derived.
    ...(given.state !== undefined
      ? { state: given.state }
      : derived.stateCode !== undefined && { state: derived.stateCode }),
    ...(given.zip !== undefined && { zip: given.zip }),
    country: guaranteed(derived.countryName),
    date_of_birth: body.date_of_birth,
    ...(given.id_number_type !== undefined && { id_number_type: given.id_number_type }),
    ...(derived.idNumber !== undefined && { id_number: derived.idNumber }),
    ...(given.non_us_other_type !== undefined && { non_us_other_type: given.non_us_other_type }),
    ...(given.id_issuing_authority !== undefined && { id_issuing_authority: given.id_issuing_authority }),
    ...(given.metadata !== undefined && { metadata: given.metadata }),
    email_normalized: normaliseEmail(body.email),
    country_alpha2: guaranteed(derived.country).alpha2,
    ...(derived.stateCode !== undefined && { state_code: derived.stateCode }),
  };
}

function normalisedCustomer(body: AdultBody, request: CustomerRequest): NormalizedCustomer {
  const reading = readBody(body, NOTHING_FAILED);
  const { given } = reading;
  const { derived } = customerRules(reading, request);
  const { phone_number: phone, kyc, sanction_screening: sanction } = given;
  const { jurisdiction, citizenship, taxId, phoneE164 } = derived;
  return {
    ...customerFields(body, given, derived),
    signed_timestamp: body.signed_timestamp,
    ...(given.middle_name !== undefined && { middle_name: given.middle_name }),
    ...(given.postal_code !== undefined && { postal_code: given.postal_code }),
    ...(jurisdiction !== undefined && { jurisdiction_code: jurisdiction.code }),
    ...(citizenship !== undefined && { citizenship_code: citizenship }),
    ...(phone !== undefined && { phone_number: phone, phone_e164: phoneE164 }),
    ...(taxId !== undefined && { tax_id: taxId, tax_id_last4: taxIdLastFour(taxId) }),
    ...(kyc !== undefined && { kyc, kyc_timestamp: guaranteed(given.kyc_timestamp) }),
    ...(sanction !== undefined && {
      sanction_screening: sanction,
      sanction_screening_timestamp: guaranteed(given.sanction_screening_timestamp),
    }),
  };
}

function normalisedMinor(body: MinorBody, request: CustomerRequest): NormalizedMinor {
  const reading = readBody(body, NOTHING_FAILED);
  const { derived } = customerRules(reading, request);
  return {
    ...customerFields(body, reading.given, derived),
    id_number_type: body.id_number_type,
    id_number: guaranteed(derived.idNumber),
    utma_signed_timestamp: body.utma_signed_timestamp,
    custodian_participant_code: body.custodian_participant_code,
    custodian_relationship: body.custodian_relationship,
  };
}

/** A value the rules guarantee once the body passed them (a country, a minor's document, a check's time). */
function guaranteed<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('unreachable: a valid customer body always has this value');
  return value;
}

// ---- entry points ---------------------------------------------------------------------------------------

/**
 * `POST /participants/customers/new`: every problem with `body`, or the normalised customer; its phone number
 * read by `parsePhoneNumber` (`phone-numbers.ts`, which `phoneNumberIn(body)` says whether the body needs).
 */
export function validateCustomerWith(
  body: unknown,
  nowMs: number,
  parsePhoneNumber: PhoneNumberParser,
): ValidationResult<NormalizedCustomer> {
  return verdict(customerRequestSchema(nowMs, parsePhoneNumber).safeParse(body));
}

/**
 * Whether validating `body` reads a phone number: only a `phone_number` sent as text is ever parsed (one of
 * another type is refused by its own check, a blank one is not given).
 */
export function phoneNumberIn(body: unknown): boolean {
  return typeof body === 'object' && body !== null && typeof Reflect.get(body, 'phone_number') === 'string';
}

/** `POST /participants/customers/minor`: every problem with `body`, or the normalised minor. */
export function validateMinor(body: unknown, nowMs: number): ValidationResult<NormalizedMinor> {
  return verdict(minorRequestSchema(nowMs).safeParse(body));
}

function verdict<T>(parsed: z.core.util.SafeParseResult<T>): ValidationResult<T> {
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, errors: formatIssues(parsed.error.issues, 'body') };
}
