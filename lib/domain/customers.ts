// zod/mini, not the classic `zod` entry: classic's `z` namespace defeats tree-shaking and adds ~450 KB
// minified to a bundle; mini brings the same validators in ~10 KB.
import * as z from 'zod/mini';
import { ValidationError } from './errors.js';
import { isSanctionedCountry, resolveCountry, resolveUsState } from './geography.js';

/**
 * Onboarding rules for individual customers: adults (who may act as custodians) through
 * `POST /participants/customers/new` and minors through `POST /participants/customers/minor`.
 * Pure: the request time comes in as `nowMs` (the caller passes `clock.nowMs()`), and checks that need
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
export type IdNumberType = (typeof ID_NUMBER_TYPES)[number];

/** The ID type whose free-form description travels in `non_us_other_type`. */
export const OTHER_ID_NUMBER_TYPE: IdNumberType = 'non_in_other';

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
  id_number_type: IdNumberType;
  id_number: string;
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
}

export interface NormalizedMinor extends CustomerFields {
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

// zod's default e-mail pattern is the pragmatic one we want (no spaces, no leading, trailing or
// consecutive dots in the local part, dotted domain with an alphabetic TLD, no quoted or IP-literal forms).
const emailSchema = z.email();
// zod's ISO date pattern also rejects impossible days, including 29 February outside leap years.
const isoDateSchema = z.iso.date();

/** RFC 5321 limits on top of the pattern: 64 characters before the `@`, 254 in all. */
export function isValidEmail(email: string): boolean {
  const at = email.lastIndexOf('@');
  return email.length <= 254 && at > 0 && at <= 64 && emailSchema.safeParse(email).success;
}

/**
 * The form in which e-mails are compared: per-platform uniqueness and the `email` filter are
 * case-insensitive over the whole address (providers treat the local part case-insensitively in practice).
 */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

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

// ---- the validator ------------------------------------------------------------------------------------

type Kind = 'adult' | 'minor';

/** Collects problems in field order; each entry reads `<field>: <what is wrong>`. */
class Problems {
  readonly list: string[] = [];
  add(field: string, problem: string): void {
    this.list.push(`${field}: ${problem}`);
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
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
  const value = requiredText(body, field, problems);
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) {
    problems.add(field, `must be one of ${allowed.join(', ')}`);
    return undefined;
  }
  return value as T;
}

function requiredPastMs(body: Record<string, unknown>, field: string, nowMs: number, problems: Problems): number | undefined {
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
  if (raw > nowMs) {
    problems.add(field, 'must not be in the future');
    return undefined;
  }
  return raw;
}

function addressLine(body: Record<string, unknown>, field: string, required: boolean, problems: Problems): string | undefined {
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
  const first_name = requiredText(body, 'first_name', problems);
  const last_name = requiredText(body, 'last_name', problems);

  const email = requiredText(body, 'email', problems);
  if (email !== undefined && !isValidEmail(email)) problems.add('email', 'must be a valid e-mail address');

  const address_one = addressLine(body, 'address_one', true, problems);
  const address_two = addressLine(body, 'address_two', false, problems);
  const city = requiredText(body, 'city', problems);

  // `state` and `zip` come before `country` in the table but their rules depend on it.
  const countryProblems = new Problems();
  const country = requiredText(body, 'country', countryProblems);
  const resolvedCountry = country === undefined ? undefined : resolveCountry(country);
  if (country !== undefined && resolvedCountry === undefined) {
    countryProblems.add('country', 'must be a supported country (English name, ISO alpha-2 or alpha-3 code)');
  } else if (resolvedCountry !== undefined && isSanctionedCountry(resolvedCountry.alpha2)) {
    countryProblems.add('country', `customers in ${resolvedCountry.name} cannot be onboarded (sanctioned jurisdiction)`);
  }
  const isUs = resolvedCountry?.alpha2 === 'US';

  const requiredForUs = 'is required when country is the United States';
  const state = isUs ? requiredText(body, 'state', problems, requiredForUs) : optionalText(body, 'state', problems);
  let state_code: string | undefined;
  if (isUs && state !== undefined) {
    state_code = resolveUsState(state)?.code;
    if (state_code === undefined) problems.add('state', 'must be a US state, DC or inhabited territory (name or USPS code)');
  }

  const zip = isUs ? requiredText(body, 'zip', problems, requiredForUs) : optionalText(body, 'zip', problems);
  if (isUs && zip !== undefined && !US_ZIP_PATTERN.test(zip)) problems.add('zip', 'must be NNNNN or NNNNN-NNNN for a US address');

  problems.list.push(...countryProblems.list);

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

  const id_number_type = requiredOneOf(body, 'id_number_type', ID_NUMBER_TYPES, problems);
  const id_number = requiredText(body, 'id_number', problems);
  const needsOtherType = id_number_type === OTHER_ID_NUMBER_TYPE;
  const non_us_other_type = needsOtherType
    ? requiredText(body, 'non_us_other_type', problems, `is required when id_number_type is ${OTHER_ID_NUMBER_TYPE}`)
    : optionalText(body, 'non_us_other_type', problems);
  if (!needsOtherType && id_number_type !== undefined && non_us_other_type !== undefined) {
    problems.add('non_us_other_type', `is only allowed when id_number_type is ${OTHER_ID_NUMBER_TYPE}`);
  }
  const id_issuing_authority = optionalText(body, 'id_issuing_authority', problems);

  let signed_timestamp: number | undefined;
  let utma_signed_timestamp: number | undefined;
  let custodian_participant_code: string | undefined;
  let custodian_relationship: CustodianRelationship | undefined;
  if (kind === 'adult') {
    signed_timestamp = requiredPastMs(body, 'signed_timestamp', nowMs, problems);
  } else {
    utma_signed_timestamp = requiredPastMs(body, 'utma_signed_timestamp', nowMs, problems);
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
    id_number_type: id_number_type!,
    id_number: id_number!,
    ...(non_us_other_type !== undefined && { non_us_other_type }),
    ...(id_issuing_authority !== undefined && { id_issuing_authority }),
    ...(metadata !== undefined && { metadata }),
    email_normalized: normaliseEmail(email!),
    country_alpha2: resolvedCountry!.alpha2,
    ...(state_code !== undefined && { state_code }),
  };
  if (kind === 'adult') return { ok: true, value: { ...fields, signed_timestamp: signed_timestamp! } };
  return {
    ok: true,
    value: {
      ...fields,
      utma_signed_timestamp: utma_signed_timestamp!,
      custodian_participant_code: custodian_participant_code!,
      custodian_relationship: custodian_relationship!,
    },
  };
}
