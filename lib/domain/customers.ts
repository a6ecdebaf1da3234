// zod/mini, not the classic `zod` entry: classic's `z` namespace defeats tree-shaking and adds ~450 KB
// minified to a bundle; mini brings the same validators in ~10 KB.
import * as z from 'zod/mini';
import {
  idTypeProblem,
  parsePhoneNumber,
  REFERENCE_ID_NUMBER_TYPES,
  REFERENCE_OTHER_ID_NUMBER_TYPE,
  resolveCitizenship,
  resolveJurisdiction,
  type ReferenceIdNumberType,
} from './customer-identity.js';
import {
  ADULT_AGE_YEARS,
  ADULT_FIELDS,
  ADULT_ID_NUMBER_TYPES,
  CUSTODIAN_RELATIONSHIPS,
  type CustodianRelationship,
  EARLIEST_DATE_OF_BIRTH,
  ID_NUMBER_TYPES,
  type IdNumberType,
  isPoBoxAddress,
  isValidIsoDate,
  MAX_METADATA_JSON_LENGTH,
  MAX_TEXT_LENGTH,
  MINOR_FIELDS,
  SCREENING_RESULTS,
  type ScreeningResult,
} from './customer-request-fields.js';
import {
  ageInYearsOn,
  type CustomerKind,
  customerRules,
  type Derived,
  identityDocumentRule,
  OTHER_ID_NUMBER_TYPE,
  type Problem,
  REFERENCE_MAX_AGE_MS,
  REFERENCE_MAX_AHEAD_MS,
  readBody,
  US_ZIP_PATTERN,
} from './customer-request-rules.js';
import { isValidEmail, normaliseEmail } from './email.js';
import { ValidationError } from './errors.js';
import { isSanctionedCountry, resolveCountry, resolveUsState } from './geography.js';
import { maskedTaxId, parseTaxId, taxIdLastFour } from './tax-ids.js';
import { isPlainObject } from './validation.js';

/**
 * Onboarding rules for individual customers: adults (who may act as custodians) through
 * `POST /participants/customers/new` and minors through `POST /participants/customers/minor`, one zod schema
 * per body that reports every problem at once, normalises the customer, and describes the body in the API
 * description. Pure: the request time comes in as `nowMs` (the caller passes `ctx.clock.nowMs()`), and checks
 * that need the store (email unique per platform, custodian exists and is an approved adult) are left to the
 * caller.
 */

export {
  ADULT_AGE_YEARS,
  ADULT_ID_NUMBER_TYPES,
  CUSTODIAN_RELATIONSHIPS,
  type CustodianRelationship,
  EARLIEST_DATE_OF_BIRTH,
  ID_NUMBER_TYPES,
  type IdNumberType,
  isPoBoxAddress,
  isValidIsoDate,
  MAX_METADATA_JSON_LENGTH,
  MAX_TEXT_LENGTH,
  SCREENING_RESULTS,
  type ScreeningResult,
  type SpecIdNumberType,
} from './customer-request-fields.js';
export {
  ageInYearsOn,
  identityDocumentRule,
  OTHER_ID_NUMBER_TYPE,
  REFERENCE_MAX_AGE_MS,
  REFERENCE_MAX_AHEAD_MS,
  US_ZIP_PATTERN,
} from './customer-request-rules.js';

/** Fields shared by adults and minors, echoed as the client sent them (trimmed). */
export interface CustomerFields {
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
 * The body of `POST /participants/customers/new` for a request at `nowMs`: every field's own checks, the
 * rules beyond them, and the normalised customer when all hold. The API description is this schema (its
 * input side; the time only moves limits the description does not show).
 */
export function customerRequestSchema(nowMs: number) {
  return z.pipe(
    bodyOf(ADULT_FIELDS, 'adult', nowMs),
    z.transform((body: AdultBody) => normalisedCustomer(body, nowMs)),
  );
}

/** The body of `POST /participants/customers/minor` for a request at `nowMs`, as `customerRequestSchema`. */
export function minorRequestSchema(nowMs: number) {
  return z.pipe(
    bodyOf(MINOR_FIELDS, 'minor', nowMs),
    z.transform((body: MinorBody) => normalisedMinor(body, nowMs)),
  );
}

/**
 * An object of `fields` whose other rules run even when some fields failed their own checks, so every
 * problem is listed at once, in the order of `fields` (a fixed order clients and tests can rely on).
 */
function bodyOf<Shape extends z.core.$ZodShape>(fields: Shape, kind: CustomerKind, nowMs: number) {
  const order = Object.keys(fields);
  const rules = z.check<Record<string, unknown>>(
    (payload) => {
      const failed = new Set(payload.issues.map((issue) => String(issue.path?.[0])));
      const { problems } = customerRules(readBody(payload.value, failed), kind, nowMs);
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
    ...(given.state !== undefined && { state: given.state }),
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

function normalisedCustomer(body: AdultBody, nowMs: number): NormalizedCustomer {
  const reading = readBody(body, NOTHING_FAILED);
  const { given } = reading;
  const { derived } = customerRules(reading, 'adult', nowMs);
  const { phone_number: phone, kyc, sanction_screening: sanction } = given;
  const { jurisdiction, citizenship, taxId } = derived;
  return {
    ...customerFields(body, given, derived),
    signed_timestamp: body.signed_timestamp,
    ...(given.middle_name !== undefined && { middle_name: given.middle_name }),
    ...(given.postal_code !== undefined && { postal_code: given.postal_code }),
    ...(jurisdiction !== undefined && { jurisdiction_code: jurisdiction.code }),
    ...(citizenship !== undefined && { citizenship_code: citizenship }),
    ...(phone !== undefined && { phone_number: phone, phone_e164: parsePhoneNumber(phone) }),
    ...(taxId !== undefined && { tax_id: taxId, tax_id_last4: taxIdLastFour(taxId) }),
    ...(kyc !== undefined && { kyc, kyc_timestamp: guaranteed(given.kyc_timestamp) }),
    ...(sanction !== undefined && {
      sanction_screening: sanction,
      sanction_screening_timestamp: guaranteed(given.sanction_screening_timestamp),
    }),
  };
}

function normalisedMinor(body: MinorBody, nowMs: number): NormalizedMinor {
  const reading = readBody(body, NOTHING_FAILED);
  const { derived } = customerRules(reading, 'minor', nowMs);
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

/** `POST /participants/customers/new`: every problem with `body`, or the normalised customer. */
export function validateCustomer(body: unknown, nowMs: number): ValidationResult<NormalizedCustomer> {
  return validate(body, nowMs, 'adult');
}

/** `POST /participants/customers/minor`: every problem with `body`, or the normalised minor. */
export function validateMinor(body: unknown, nowMs: number): ValidationResult<NormalizedMinor> {
  return validate(body, nowMs, 'minor');
}

/** As `validateCustomer`, throwing `ValidationError` with all problems instead of returning them. */
export function parseCustomer(body: unknown, nowMs: number): NormalizedCustomer {
  const result = validateCustomer(body, nowMs);
  if (!result.ok) throw new ValidationError(result.errors);
  return result.value;
}

// ---- the hand-written validator, until the schemas above take its place -------------------------------

const MIN_PLAUSIBLE_MS = 1_000_000_000_000;
const OUTSIDE_REFERENCE_WINDOW = 'must be within the last year (and at most a day ahead of server time)';

function withinReferenceWindow(ms: number, nowMs: number): boolean {
  return ms >= nowMs - REFERENCE_MAX_AGE_MS && ms <= nowMs + REFERENCE_MAX_AHEAD_MS;
}

function utcDay(nowMs: number): string {
  return new Date(nowMs).toISOString().slice(0, 10);
}

const POSTAL_CODE_PATTERN = /^(?=(?:[ -]?[A-Za-z0-9]){3,12}$)[A-Za-z0-9](?:[ -]?[A-Za-z0-9])*$/;
const OTHER_ID_NUMBER_TYPES: ReadonlySet<string> = new Set([OTHER_ID_NUMBER_TYPE, REFERENCE_OTHER_ID_NUMBER_TYPE]);

function isReferenceIdType(type: IdNumberType): type is ReferenceIdNumberType {
  return (REFERENCE_ID_NUMBER_TYPES as readonly string[]).includes(type);
}

// ---- the validator ------------------------------------------------------------------------------------

type Kind = 'adult' | 'minor';

/** Collects problems in field order; each entry reads `<field>: <what is wrong>`. */
class Problems {
  readonly list: string[] = [];
  add(field: string, problem: string): void {
    this.list.push(`${field}: ${problem}`);
  }
}

/** Absent, `null` and blank all mean "not given" for optional text, so a client's `""` is not an error. */
function optionalText(body: Record<string, unknown>, field: string, problems: Problems): string | undefined {
  const raw = body[field];
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'string') {
    problems.add(field, 'must be a string');
    return undefined;
  }
  const value = raw.trim();
  if (value === '') return undefined;
  if (value.length > MAX_TEXT_LENGTH) {
    problems.add(field, `must be at most ${MAX_TEXT_LENGTH} characters`);
    return undefined;
  }
  return value;
}

function requiredText(
  body: Record<string, unknown>,
  field: string,
  problems: Problems,
  whenMissing = 'is required',
): string | undefined {
  const raw = body[field];
  if (raw === undefined || raw === null) {
    problems.add(field, whenMissing);
    return undefined;
  }
  if (typeof raw === 'string' && raw.trim() === '') {
    problems.add(field, 'must not be empty');
    return undefined;
  }
  return optionalText(body, field, problems);
}

function requiredOneOf<T extends string>(
  body: Record<string, unknown>,
  field: string,
  allowed: readonly T[],
  problems: Problems,
): T | undefined {
  return oneOf(body, field, allowed, problems, 'is required');
}

/** One of `allowed`; required (saying `whenMissing` when absent) unless `whenMissing` is undefined. */
function oneOf<T extends string>(
  body: Record<string, unknown>,
  field: string,
  allowed: readonly T[],
  problems: Problems,
  whenMissing: string | undefined,
): T | undefined {
  const value =
    whenMissing === undefined ? optionalText(body, field, problems) : requiredText(body, field, problems, whenMissing);
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) {
    problems.add(field, `must be one of ${allowed.join(', ')}`);
    return undefined;
  }
  return value as T;
}

/**
 * A required millisecond time. `past`: not after `nowMs` (the spec's rule for the minor's UTMA signature);
 * `reference`: within the reference API's window, as its `signed_timestamp` is.
 */
function requiredMs(
  body: Record<string, unknown>,
  field: string,
  nowMs: number,
  bound: 'past' | 'reference',
  problems: Problems,
): number | undefined {
  const raw = body[field];
  if (raw === undefined || raw === null) {
    problems.add(field, 'is required');
    return undefined;
  }
  if (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw < 0) {
    problems.add(field, 'must be an integer UNIX time in milliseconds');
    return undefined;
  }
  if (raw < MIN_PLAUSIBLE_MS) {
    problems.add(field, 'must be in milliseconds (this value looks like seconds)');
    return undefined;
  }
  if (bound === 'past' && raw > nowMs) {
    problems.add(field, 'must not be in the future');
    return undefined;
  }
  if (bound === 'reference' && !withinReferenceWindow(raw, nowMs)) {
    problems.add(field, OUTSIDE_REFERENCE_WINDOW);
    return undefined;
  }
  return raw;
}

interface Screening {
  result: ScreeningResult;
  timestampMs: number;
}

/**
 * A check the platform ran (`kyc`, `sanction_screening`) with its `<field>_timestamp`: both or neither.
 * Customers are approved at once, so a failed check is refused rather than approved.
 */
function screening(
  body: Record<string, unknown>,
  field: string,
  failed: string,
  nowMs: number,
  problems: Problems,
): Screening | undefined {
  const timestampField = `${field}_timestamp`;
  const hasResult = body[field] !== undefined && body[field] !== null;
  const hasTimestamp = body[timestampField] !== undefined && body[timestampField] !== null;
  if (!hasResult && !hasTimestamp) return undefined;
  const result = hasResult ? requiredOneOf(body, field, SCREENING_RESULTS, problems) : undefined;
  if (!hasResult) problems.add(field, `is required with ${timestampField}`);
  if (result === 'fail') problems.add(field, `a customer who ${failed} cannot be onboarded`);
  const raw = body[timestampField];
  let timestampMs: number | undefined;
  if (!hasTimestamp) {
    problems.add(timestampField, `is required with ${field}`);
  } else if (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw < MIN_PLAUSIBLE_MS) {
    problems.add(timestampField, 'must be an integer UNIX time in milliseconds');
  } else if (!withinReferenceWindow(raw, nowMs)) {
    problems.add(timestampField, OUTSIDE_REFERENCE_WINDOW);
  } else {
    timestampMs = raw;
  }
  return result === 'pass' && timestampMs !== undefined ? { result, timestampMs } : undefined;
}

function addressLine(
  body: Record<string, unknown>,
  field: string,
  required: boolean,
  problems: Problems,
): string | undefined {
  const value = required ? requiredText(body, field, problems) : optionalText(body, field, problems);
  if (value !== undefined && isPoBoxAddress(value)) {
    problems.add(field, 'PO Box addresses are not accepted; give a street address');
    return undefined;
  }
  return value;
}

function validate(body: unknown, nowMs: number, kind: 'adult'): ValidationResult<NormalizedCustomer>;
function validate(body: unknown, nowMs: number, kind: 'minor'): ValidationResult<NormalizedMinor>;
function validate(body: unknown, nowMs: number, kind: Kind): ValidationResult<NormalizedCustomer | NormalizedMinor> {
  if (!isPlainObject(body)) return { ok: false, errors: ['body: must be a JSON object'] };
  const problems = new Problems();

  // Fields are checked in the spec's table order so the error list reads in a stable, predictable order.
  const adult = kind === 'adult';
  const first_name = requiredText(body, 'first_name', problems);
  const middle_name = adult ? optionalText(body, 'middle_name', problems) : undefined;
  const last_name = requiredText(body, 'last_name', problems);

  const email = requiredText(body, 'email', problems);
  if (email !== undefined && !isValidEmail(email)) problems.add('email', 'must be a valid e-mail address');

  const address_one = addressLine(body, 'address_one', true, problems);
  const address_two = addressLine(body, 'address_two', false, problems);
  const city = requiredText(body, 'city', problems);

  // `state` and `zip` come before `country` in the table but their rules depend on it.
  const countryProblems = new Problems();
  // An adult may name the subdivision by its ISO 3166-2 code (the reference API's `jurisdiction_code`),
  // which names the country too: it stands in for `state` and `country`, or must agree with them.
  const jurisdictionText = adult ? optionalText(body, 'jurisdiction_code', countryProblems) : undefined;
  const jurisdiction = jurisdictionText === undefined ? undefined : resolveJurisdiction(jurisdictionText);
  if (jurisdictionText !== undefined && jurisdiction === undefined) {
    countryProblems.add(
      'jurisdiction_code',
      'must be the ISO 3166-2 code of a US state, DC or inhabited territory (e.g. US-CA)',
    );
  }
  const countryText =
    jurisdictionText === undefined
      ? requiredText(body, 'country', countryProblems)
      : optionalText(body, 'country', countryProblems);
  const countryFromText = countryText === undefined ? undefined : resolveCountry(countryText);
  const resolvedCountry =
    countryText === undefined ? jurisdiction && resolveCountry(jurisdiction.countryAlpha2) : countryFromText;
  if (countryText !== undefined && countryFromText === undefined) {
    countryProblems.add('country', 'must be a supported country (English name, ISO alpha-2 or alpha-3 code)');
  } else if (resolvedCountry !== undefined && isSanctionedCountry(resolvedCountry.alpha2)) {
    countryProblems.add(
      'country',
      `customers in ${resolvedCountry.name} cannot be onboarded (sanctioned jurisdiction)`,
    );
  } else if (jurisdiction && resolvedCountry && resolvedCountry.alpha2 !== jurisdiction.countryAlpha2) {
    countryProblems.add(
      'jurisdiction_code',
      `${jurisdiction.code} disagrees with country (${countryText}); give one, or both agreeing`,
    );
  }
  const country = countryText ?? resolvedCountry?.name;
  const isUs = resolvedCountry?.alpha2 === 'US';

  const requiredForUs = 'is required when country is the United States';
  const state =
    isUs && jurisdictionText === undefined
      ? requiredText(body, 'state', problems, requiredForUs)
      : optionalText(body, 'state', problems);
  let state_code: string | undefined;
  if (isUs && state !== undefined) {
    state_code = resolveUsState(state)?.code;
    if (state_code === undefined)
      problems.add('state', 'must be a US state, DC or inhabited territory (name or USPS code)');
  }
  if (jurisdiction && isUs) {
    if (state_code !== undefined && state_code !== jurisdiction.state.code) {
      problems.add(
        'jurisdiction_code',
        `${jurisdiction.code} disagrees with state (${state}); give one, or both agreeing`,
      );
    }
    state_code ??= jurisdiction.state.code;
  }

  // The reference API's `postal_code` may carry a US ZIP in place of `zip`.
  const postal_code = adult ? optionalText(body, 'postal_code', problems) : undefined;
  const zip =
    isUs && postal_code === undefined
      ? requiredText(body, 'zip', problems, requiredForUs)
      : optionalText(body, 'zip', problems);
  if (isUs && zip !== undefined && !US_ZIP_PATTERN.test(zip))
    problems.add('zip', 'must be NNNNN or NNNNN-NNNN for a US address');
  if (postal_code !== undefined) {
    if (isUs && !US_ZIP_PATTERN.test(postal_code))
      problems.add('postal_code', 'must be NNNNN or NNNNN-NNNN for a US address');
    else if (!POSTAL_CODE_PATTERN.test(postal_code))
      problems.add('postal_code', 'must be 3 to 12 letters and digits (spaces or hyphens may group them)');
  }

  problems.list.push(...countryProblems.list);

  const citizenshipText = adult ? optionalText(body, 'citizenship_code', problems) : undefined;
  const citizenship_code = citizenshipText === undefined ? undefined : resolveCitizenship(citizenshipText);
  if (citizenshipText !== undefined && citizenship_code === undefined)
    problems.add('citizenship_code', 'must be an ISO 3166-1 alpha-2 country code');

  const phoneText = adult ? optionalText(body, 'phone_number', problems) : undefined;
  const phone_e164 = phoneText === undefined ? undefined : parsePhoneNumber(phoneText);
  if (phoneText !== undefined && phone_e164 === undefined) {
    problems.add('phone_number', 'must be a phone number with its country code (E.164, e.g. +15557778888)');
  }

  const date_of_birth = requiredText(body, 'date_of_birth', problems);
  if (date_of_birth !== undefined) {
    if (!isValidIsoDate(date_of_birth)) {
      problems.add('date_of_birth', 'must be a real calendar date in the form YYYY-MM-DD');
    } else if (date_of_birth > utcDay(nowMs)) {
      problems.add('date_of_birth', 'must not be in the future');
    } else if (date_of_birth < EARLIEST_DATE_OF_BIRTH) {
      problems.add('date_of_birth', `must not be before ${EARLIEST_DATE_OF_BIRTH}`);
    } else {
      const age = ageInYearsOn(date_of_birth, nowMs);
      if (kind === 'adult' && age < ADULT_AGE_YEARS) {
        problems.add('date_of_birth', `customer must be at least ${ADULT_AGE_YEARS} years old`);
      } else if (kind === 'minor' && age >= ADULT_AGE_YEARS) {
        problems.add('date_of_birth', `a minor must be under ${ADULT_AGE_YEARS} years old`);
      }
    }
  }

  // The tax id is read here, its problems reported in table order below: whether an identity document is
  // needed depends on it.
  const taxProblems = new Problems();
  const taxText = adult ? optionalText(body, 'tax_id', taxProblems) : undefined;
  const idDocument = identityDocumentRule(citizenship_code, taxText);
  // A document number says nothing without its type, so a number given always needs one.
  const idNumberGiven =
    body.id_number !== undefined &&
    body.id_number !== null &&
    !(typeof body.id_number === 'string' && body.id_number.trim() === '');
  const idTypes = adult ? ADULT_ID_NUMBER_TYPES : ID_NUMBER_TYPES;
  const idTypeMissing = idDocument.required
    ? idDocument.whenMissing
    : idNumberGiven
      ? 'is required with id_number'
      : undefined;
  const problemsBeforeIdType = problems.list.length;
  const id_number_type = oneOf<IdNumberType>(body, 'id_number_type', idTypes, problems, idTypeMissing);
  const idTypeLeftOut = id_number_type === undefined && problems.list.length === problemsBeforeIdType;
  if (id_number_type !== undefined && resolvedCountry !== undefined && isReferenceIdType(id_number_type)) {
    const problem = idTypeProblem(id_number_type, {
      countryAlpha2: resolvedCountry.alpha2,
      citizenshipAlpha2: citizenship_code,
    });
    if (problem !== undefined) problems.add('id_number_type', problem);
  }
  // For an `ssn` the ID number is the tax id: it may come in either field, and is kept only encrypted.
  const isSsn = id_number_type === 'ssn';
  const id_number_text =
    isSsn || !idDocument.required
      ? optionalText(body, 'id_number', problems)
      : requiredText(body, 'id_number', problems, idDocument.whenMissing);
  const needsOtherType = id_number_type !== undefined && OTHER_ID_NUMBER_TYPES.has(id_number_type);
  const non_us_other_type = needsOtherType
    ? requiredText(body, 'non_us_other_type', problems, `is required when id_number_type is ${id_number_type}`)
    : optionalText(body, 'non_us_other_type', problems);
  // Not said when the type itself was refused (that problem is already listed); said when none was needed and none came.
  if (!needsOtherType && (id_number_type !== undefined || idTypeLeftOut) && non_us_other_type !== undefined) {
    problems.add(
      'non_us_other_type',
      `is only allowed when id_number_type is ${adult ? `${OTHER_ID_NUMBER_TYPE} or ${REFERENCE_OTHER_ID_NUMBER_TYPE}` : OTHER_ID_NUMBER_TYPE}`,
    );
  }
  const id_issuing_authority = optionalText(body, 'id_issuing_authority', problems);

  // Tax id: an SSN/ITIN for US citizens and residents (unless another citizenship is given), a foreign TIN
  // otherwise. Problems name the field but never repeat its value: error texts reach logs.
  let tax_id: string | undefined;
  if (adult) {
    problems.list.push(...taxProblems.list);
    const usTaxId = isSsn || citizenship_code === 'US' || (citizenship_code === undefined && isUs);
    const parsedTax = taxText === undefined ? undefined : parseTaxId(taxText, usTaxId);
    if (parsedTax && 'problem' in parsedTax) problems.add('tax_id', parsedTax.problem);
    else tax_id = parsedTax?.value;
    if (isSsn && id_number_text !== undefined) {
      const parsedId = parseTaxId(id_number_text, true);
      if ('problem' in parsedId) problems.add('id_number', `for an ssn ${parsedId.problem}`);
      else if (tax_id !== undefined && tax_id !== parsedId.value)
        problems.add('tax_id', 'differs from id_number; for an ssn they are the same number');
      else if (taxText === undefined) tax_id = parsedId.value;
    }
    if (tax_id === undefined && taxText === undefined) {
      if (isSsn && id_number_text === undefined)
        problems.add('tax_id', 'is required when id_number_type is ssn (or give the SSN as id_number)');
      else if (citizenship_code === 'US') problems.add('tax_id', 'is required when citizenship_code is US');
    }
  }
  const tax_id_last4 = tax_id === undefined ? undefined : taxIdLastFour(tax_id);
  const id_number = isSsn ? (tax_id_last4 === undefined ? undefined : maskedTaxId(tax_id_last4)) : id_number_text;

  let signed_timestamp: number | undefined;
  let utma_signed_timestamp: number | undefined;
  let custodian_participant_code: string | undefined;
  let custodian_relationship: CustodianRelationship | undefined;
  let kyc: Screening | undefined;
  let sanction_screening: Screening | undefined;
  if (kind === 'adult') {
    signed_timestamp = requiredMs(body, 'signed_timestamp', nowMs, 'reference', problems);
    kyc = screening(body, 'kyc', 'failed KYC', nowMs, problems);
    sanction_screening = screening(body, 'sanction_screening', 'failed sanctions screening', nowMs, problems);
  } else {
    utma_signed_timestamp = requiredMs(body, 'utma_signed_timestamp', nowMs, 'past', problems);
    custodian_participant_code = requiredText(body, 'custodian_participant_code', problems);
    custodian_relationship = requiredOneOf(body, 'custodian_relationship', CUSTODIAN_RELATIONSHIPS, problems);
  }

  let metadata: Record<string, unknown> | undefined;
  if (body.metadata !== undefined && body.metadata !== null) {
    if (!isPlainObject(body.metadata)) {
      problems.add('metadata', 'must be a JSON object');
    } else if (JSON.stringify(body.metadata).length > MAX_METADATA_JSON_LENGTH) {
      problems.add('metadata', `must be at most ${MAX_METADATA_JSON_LENGTH} characters as JSON`);
    } else {
      metadata = body.metadata;
    }
  }

  if (problems.list.length > 0) return { ok: false, errors: problems.list };

  // Every required value is defined once no problem was recorded; the assertions below only tell tsc so.
  const fields: CustomerFields = {
    first_name: first_name!,
    last_name: last_name!,
    email: email!,
    address_one: address_one!,
    ...(address_two !== undefined && { address_two }),
    city: city!,
    ...(state !== undefined && { state }),
    ...(zip !== undefined && { zip }),
    country: country!,
    date_of_birth: date_of_birth!,
    ...(id_number_type !== undefined && { id_number_type }),
    ...(id_number !== undefined && { id_number }),
    ...(non_us_other_type !== undefined && { non_us_other_type }),
    ...(id_issuing_authority !== undefined && { id_issuing_authority }),
    ...(metadata !== undefined && { metadata }),
    email_normalized: normaliseEmail(email!),
    country_alpha2: resolvedCountry!.alpha2,
    ...(state_code !== undefined && { state_code }),
  };
  if (kind === 'adult') {
    const customer: NormalizedCustomer = {
      ...fields,
      signed_timestamp: signed_timestamp!,
      ...(middle_name !== undefined && { middle_name }),
      ...(postal_code !== undefined && { postal_code }),
      ...(jurisdiction !== undefined && { jurisdiction_code: jurisdiction.code }),
      ...(citizenship_code !== undefined && { citizenship_code }),
      ...(phoneText !== undefined && { phone_number: phoneText, phone_e164 }),
      ...(tax_id !== undefined && { tax_id, tax_id_last4 }),
      ...(kyc !== undefined && { kyc: kyc.result, kyc_timestamp: kyc.timestampMs }),
      ...(sanction_screening !== undefined && {
        sanction_screening: sanction_screening.result,
        sanction_screening_timestamp: sanction_screening.timestampMs,
      }),
    };
    return { ok: true, value: customer };
  }
  return {
    ok: true,
    value: {
      ...fields,
      id_number_type: id_number_type!,
      id_number: id_number!,
      utma_signed_timestamp: utma_signed_timestamp!,
      custodian_participant_code: custodian_participant_code!,
      custodian_relationship: custodian_relationship!,
    },
  };
}
