// zod/mini, not the classic `zod` entry: classic's `z` namespace defeats tree-shaking and adds ~450 KB
// minified to a bundle; mini brings the same validators in ~10 KB.
import * as z from 'zod/mini';
import { isPlainObject } from './validation.js';
import { ValidationError } from './errors.js';
import {
  idTypeProblem,
  parsePhoneNumber,
  REFERENCE_ID_NUMBER_TYPES,
  REFERENCE_OTHER_ID_NUMBER_TYPE,
  resolveCitizenship,
  resolveJurisdiction,
  type ReferenceIdNumberType,
} from './customer-identity.js';
import { isValidEmail, normaliseEmail } from './email.js';
import { isSanctionedCountry, resolveCountry, resolveUsState } from './geography.js';
import { isItin, maskedTaxId, parseTaxId, taxIdLastFour } from './tax-ids.js';

/**
 * Onboarding rules for individual customers: adults (who may act as custodians) through
 * `POST /participants/customers/new` and minors through `POST /participants/customers/minor`.
 * Pure: the request time comes in as `nowMs` (the caller passes `ctx.clock.nowMs()`), and checks that need
 * the store (email unique per platform, custodian exists and is an approved adult) are left to the caller.
 */

export const ID_NUMBER_TYPES = [
  'aadhar_card',
  'in_driving_license',
  'in_passport',
  'in_passport_card',
  'non_in_passport',
  'non_in_other',
] as const;
export type SpecIdNumberType = (typeof ID_NUMBER_TYPES)[number];
/** Minors take the spec's ID types only; adults also take the reference API's. */
export type IdNumberType = SpecIdNumberType | ReferenceIdNumberType;
export const ADULT_ID_NUMBER_TYPES: readonly IdNumberType[] = [...ID_NUMBER_TYPES, ...REFERENCE_ID_NUMBER_TYPES];

/** The ID type whose free-form description travels in `non_us_other_type`. */
export const OTHER_ID_NUMBER_TYPE: IdNumberType = 'non_in_other';
/** Types that need `non_us_other_type`: the spec's `non_in_other` and the reference API's `non_us_other`. */
const OTHER_ID_NUMBER_TYPES: ReadonlySet<string> = new Set([OTHER_ID_NUMBER_TYPE, REFERENCE_OTHER_ID_NUMBER_TYPE]);

export const SCREENING_RESULTS = ['pass', 'fail'] as const;
export type ScreeningResult = (typeof SCREENING_RESULTS)[number];

/**
 * The reference API's window for the agreement, KYC and screening times (`signed_timestamp`,
 * `kyc_timestamp`, `sanction_screening_timestamp`): at most a year old, at most a day ahead.
 */
export const REFERENCE_MAX_AGE_MS = 365 * 24 * 3_600_000;
export const REFERENCE_MAX_AHEAD_MS = 24 * 3_600_000;
const OUTSIDE_REFERENCE_WINDOW = 'must be within the last year (and at most a day ahead of server time)';

function withinReferenceWindow(ms: number, nowMs: number): boolean {
  return ms >= nowMs - REFERENCE_MAX_AGE_MS && ms <= nowMs + REFERENCE_MAX_AHEAD_MS;
}

export const CUSTODIAN_RELATIONSHIPS = ['parent', 'legal_guardian'] as const;
export type CustodianRelationship = (typeof CUSTODIAN_RELATIONSHIPS)[number];

export const ADULT_AGE_YEARS = 18;

/**
 * Not in the spec. Long enough for any real name or address line (the upstream API allows 200 on its
 * longest address track), short enough that no single field can bloat a stored item.
 */
export const MAX_TEXT_LENGTH = 200;

/** Keeps a customer item far below DynamoDB's 400 KB item limit whatever the platform puts in metadata. */
export const MAX_METADATA_JSON_LENGTH = 16 * 1024;

/**
 * A millisecond timestamp below this (2001-09-09) is almost surely seconds sent by mistake; read as
 * milliseconds it would date the signature to January 1970.
 */
const MIN_PLAUSIBLE_MS = 1_000_000_000_000;

/** Older than any living person: an earlier date is a typo (`0980-...`) or a placeholder, not a birthday. */
export const EARLIEST_DATE_OF_BIRTH = '1900-01-01';

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
  return unwrap(validateCustomer(body, nowMs));
}

function unwrap<T>(result: ValidationResult<T>): T {
  if (!result.ok) throw new ValidationError(result.errors);
  return result.value;
}

// ---- individual rules, exported for reuse and direct tests --------------------------------------------

// zod's ISO date pattern also rejects impossible days, including 29 February outside leap years.
const isoDateSchema = z.iso.date();

/** `YYYY-MM-DD` naming a real calendar day. */
export function isValidIsoDate(date: string): boolean {
  return isoDateSchema.safeParse(date).success;
}

/**
 * Whole years between `dateOfBirth` (`YYYY-MM-DD`) and the UTC calendar day of `nowMs`; a birthday
 * falling today counts. Someone born on 29 February turns a year older on 1 March in common years: the
 * later of the two usual readings, so no one is treated as an adult a day early.
 */
export function ageInYearsOn(dateOfBirth: string, nowMs: number): number {
  const [birthYear, birthMonth, birthDay] = dateOfBirth.split('-').map(Number) as [number, number, number];
  const today = new Date(nowMs);
  const year = today.getUTCFullYear();
  const month = today.getUTCMonth() + 1;
  const day = today.getUTCDate();
  const birthdayReached = month > birthMonth || (month === birthMonth && day >= birthDay);
  return year - birthYear - (birthdayReached ? 0 : 1);
}

/** The request day in UTC as `YYYY-MM-DD`, which orders correctly as text against a date of birth. */
function utcDay(nowMs: number): string {
  return new Date(nowMs).toISOString().slice(0, 10);
}

/**
 * Post-office boxes in their common spellings. Lines are lowercased and their dots, commas and hyphens
 * read as spaces first, so `P.O. Box`, `P.O.Box`, `PO-Box` and `P O Box` all reach the first pattern.
 *
 * Spellings that are unambiguous on their own (`PO Box`, `Post Office Box`, `GPO Box`) are rejected
 * wherever they appear. Run-together or short forms (`POBox`, `POB`, `Post Box`, a line starting with
 * `Box`) are rejected only when a box number follows, since as plain words they also start street names
 * (`Pobox Street`, `Box Hill Road`).
 *
 * Deliberately allowed:
 * - `RR 2 Box 15` / `HC 1 Box 5`: rural-route and highway-contract boxes are delivered to the home.
 * - `PMB 123`: a private mailbox at a commercial mail agency sits at a street address; the spec bans only
 *   PO boxes. Screening such addresses is a KYC-provider concern.
 */
const PO_BOX_PATTERNS: readonly RegExp[] = [
  /\b(?:g ?)?p ?o box\b/,
  /\bpost office box\b/,
  /\bpobox ?(?:#|no\b|number\b|\d|$)/,
  /\bp ?o ?b ?(?:#|no\b|number\b|\d)/,
  /\bpost(?:al)? ?box ?(?:#|no\b|number\b|\d)/,
  /^box ?(?:#|no\b|number\b|\d)/,
];

export function isPoBoxAddress(line: string): boolean {
  const normalised = line
    .toLowerCase()
    .replace(/[.,\-]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return PO_BOX_PATTERNS.some((pattern) => pattern.test(normalised));
}

export const US_ZIP_PATTERN = /^\d{5}(?:-\d{4})?$/;

/** A postal code outside the US: 3 to 12 letters and digits, optionally grouped (`SW1A 1AA`, `10115`). */
const POSTAL_CODE_PATTERN = /^(?=(?:[ -]?[A-Za-z0-9]){3,12}$)[A-Za-z0-9](?:[ -]?[A-Za-z0-9])*$/;

/**
 * Whether the customer must present an identity document (`id_number_type` and `id_number`), and what a
 * missing one is told. The reference API (anchor-api.md 1.1) identifies a US citizen by the SSN in `tax_id`:
 * its US-citizen track has no `id_number` and an optional `id_number_type`. An ITIN as the tax id needs the
 * document again, and non-US citizens always present one. `citizenship_code` is optional here, so a
 * customer who does not say they are a US citizen presents a document as before. A US citizen who gives no
 * tax id is told only that `tax_id` is required: an SSN there is all that is missing.
 */
export function identityDocumentRule(
  citizenship: string | undefined,
  taxText: string | undefined,
): { required: boolean; whenMissing: string } {
  if (citizenship !== 'US') return { required: true, whenMissing: 'is required' };
  if (taxText !== undefined && isItin(taxText))
    return { required: true, whenMissing: 'is required when tax_id is an ITIN' };
  return { required: false, whenMissing: 'is required' };
}

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
