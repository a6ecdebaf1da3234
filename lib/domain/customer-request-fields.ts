// zod/mini, not the classic `zod` entry: classic's `z` namespace defeats tree-shaking and adds ~450 KB
// minified to a bundle; mini brings the same validators in ~10 KB.
import * as z from 'zod/mini';
import { REFERENCE_ID_NUMBER_TYPES, resolveCitizenship, type ReferenceIdNumberType } from './customer-identity.js';
import { isValidEmail } from './email.js';
import { CONTROL_CHARACTER_MESSAGE, isPrintableText, refusedFirst } from './validation.js';

/**
 * The fields of the customer onboarding bodies (`POST /participants/customers/new` and `/minor`), each with
 * the checks that need nothing but its own value, its messages and its API description. The rules spanning
 * fields are in `customer-request-rules.ts`; `customers.ts` puts both together into one schema per body.
 */

const ID_NUMBER_TYPES = [
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
const ADULT_ID_NUMBER_TYPES = [...ID_NUMBER_TYPES, ...REFERENCE_ID_NUMBER_TYPES] as const;

export const SCREENING_RESULTS = ['pass', 'fail'] as const;
export type ScreeningResult = (typeof SCREENING_RESULTS)[number];

export const CUSTODIAN_RELATIONSHIPS = ['parent', 'legal_guardian'] as const;
export type CustodianRelationship = (typeof CUSTODIAN_RELATIONSHIPS)[number];

export const ADULT_AGE_YEARS = 18;

/**
 * Not in the spec. Long enough for any real name or address line (the upstream API allows 200 on its
 * longest address track), short enough that no single field can bloat a stored item.
 */
export const MAX_TEXT_LENGTH = 200;

/** Keeps a customer item far below DynamoDB's 400 KB item limit whatever the platform puts in metadata. */
const MAX_METADATA_JSON_LENGTH = 16 * 1024;

/**
 * A millisecond timestamp below this (2001-09-09) is almost surely seconds sent by mistake; read as
 * milliseconds it would date the signature to January 1970.
 */
const MIN_PLAUSIBLE_MS = 1_000_000_000_000;

/** Older than any living person: an earlier date is a typo (`0980-...`) or a placeholder, not a birthday. */
const EARLIEST_DATE_OF_BIRTH = '1900-01-01';

// ---- single-field rules, exported for direct tests ----------------------------------------------------

// zod's ISO date pattern also rejects impossible days, including 29 February outside leap years.
const isoDateSchema = z.iso.date();

/** `YYYY-MM-DD` naming a real calendar day. */
function isValidIsoDate(date: string): boolean {
  return isoDateSchema.safeParse(date).success;
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

// ---- how a field is read ------------------------------------------------------------------------------

const MUST_NOT_BE_EMPTY = 'must not be empty';
const TOO_LONG = `must be at most ${MAX_TEXT_LENGTH} characters`;

/**
 * A field's checks stop at its first problem: a client gets one message per field, the most basic one
 * (a string of 300 characters is told its length, not that it is no e-mail address).
 */
const UNTIL_A_PROBLEM = { when: (payload: z.core.ParsePayload) => payload.issues.length === 0 };

/** A check of a field's value, listed with `message` when `holds` is false. */
/* @__NO_SIDE_EFFECTS__ */
function rule<T>(holds: (value: T) => boolean, message: string) {
  return z.refine<T>(holds, { error: message, ...UNTIL_A_PROBLEM });
}

/**
 * How text is read before its checks: trimmed. Absent and `null` both become `undefined` (not sent) and a
 * blank string becomes `null` (sent empty): an optional field takes either as not given, a required one says
 * `is required` or `must not be empty`, and the cross-field rules that make a field required tell them apart
 * the same way. Anything not a string passes unchanged, for the field's type check to refuse.
 */
function readText(raw: unknown): unknown {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'string') return raw;
  const trimmed = raw.trim();
  return trimmed === '' ? null : trimmed;
}

/** What a text field says of a value it refused as a whole (after `readText`). */
function textProblem(input: unknown, whenMissing: string): string {
  if (input === undefined) return whenMissing;
  return input === null ? MUST_NOT_BE_EMPTY : 'must be a string';
}

type TextCheck = z.core.$ZodCheck<string>;

/** Trimmed text of at most `MAX_TEXT_LENGTH` characters, its description saying so. */
function text(description: string, checks: readonly TextCheck[]) {
  return z
    .string({ error: (issue) => textProblem(issue.input, 'is required') })
    .check(
      z.maxLength(MAX_TEXT_LENGTH, { error: TOO_LONG, ...UNTIL_A_PROBLEM }),
      rule(isPrintableText, CONTROL_CHARACTER_MESSAGE),
      ...checks,
      z.describe(`${description} Trimmed; at most ${MAX_TEXT_LENGTH} characters.`),
    );
}

/** A required text field: absent or `null` is `is required`, blank is `must not be empty`. */
/* @__NO_SIDE_EFFECTS__ */
function requiredText(description: string, ...checks: TextCheck[]) {
  return z.pipe(z.transform(readText), text(description, checks));
}

/** An optional text field: absent, `null` and blank are all not given (`null` in the parsed body means blank). */
/* @__NO_SIDE_EFFECTS__ */
function optionalText(description: string, ...checks: TextCheck[]) {
  return z.pipe(z.transform(readText), z.optional(z.nullable(text(description, checks))));
}

/** One of `values`, read as text is (trimmed), with the text messages before `must be one of`. */
/* @__NO_SIDE_EFFECTS__ */
function oneOf<const T extends readonly [string, ...string[]]>(values: T, description?: string) {
  const schema = z.enum(values, {
    error: (issue) => {
      const input = issue.input;
      if (typeof input !== 'string') return textProblem(input, 'is required');
      return input.length > MAX_TEXT_LENGTH ? TOO_LONG : `must be one of ${values.join(', ')}`;
    },
  });
  return description === undefined ? schema : schema.check(z.describe(description));
}

/* @__NO_SIDE_EFFECTS__ */
function requiredOneOf<const T extends readonly [string, ...string[]]>(values: T, description?: string) {
  return z.pipe(z.transform(readText), oneOf(values, description));
}

/** Optional, blank read as not given: `null` in the parsed body means blank, for rules that require it after all. */
/* @__NO_SIDE_EFFECTS__ */
function optionalOneOf<const T extends readonly [string, ...string[]]>(values: T, description: string) {
  return z.pipe(z.transform(readText), z.optional(z.nullable(oneOf(values, description))));
}

/** A platform check (`kyc`, `sanction_screening`): optional, but when sent not blank, and never `fail`. */
/* @__NO_SIDE_EFFECTS__ */
function screeningResult(description: string, failed: string) {
  const result = oneOf(SCREENING_RESULTS, description).check(
    rule((value) => value !== 'fail', `a customer who ${failed} cannot be onboarded`),
  );
  return z.pipe(
    z.transform(readText),
    z.optional(z.nullable(result).check(rule((value) => value !== null, MUST_NOT_BE_EMPTY))),
  );
}

const NOT_MILLISECONDS = 'must be an integer UNIX time in milliseconds';

/** An integer time in milliseconds with `checks`; a number with a fraction is refused first (`refusedFirst`). */
function integerMs(whenRefused: (input: unknown) => string, ...checks: z.core.$ZodCheck<number>[]) {
  const fraction = (value: unknown) =>
    typeof value === 'number' && Number.isFinite(value) && !Number.isInteger(value) ? NOT_MILLISECONDS : undefined;
  return refusedFirst(fraction, z.int({ error: (issue) => whenRefused(issue.input) }).check(...checks));
}

/** When an agreement was signed: required, in milliseconds (its window is a rule of the request time). */
/* @__NO_SIDE_EFFECTS__ */
function signedAt(description: string) {
  return integerMs(
    (input) => (input === undefined || input === null ? 'is required' : NOT_MILLISECONDS),
    z.minimum(0, { error: NOT_MILLISECONDS, ...UNTIL_A_PROBLEM }),
    rule((ms: number) => ms >= MIN_PLAUSIBLE_MS, 'must be in milliseconds (this value looks like seconds)'),
    z.describe(description),
  );
}

/** When a platform check ran: optional (its pairing with the result and its window are rules of their own). */
/* @__NO_SIDE_EFFECTS__ */
function screenedAt(description: string) {
  const time = integerMs(
    () => NOT_MILLISECONDS,
    rule((ms: number) => ms >= MIN_PLAUSIBLE_MS, NOT_MILLISECONDS),
    z.describe(description),
  );
  return z.optional(z.nullable(time));
}

/** `YYYY-MM-DD` naming a real day, not before 1900 (not in the future, and the age, are rules of the request time). */
/* @__NO_SIDE_EFFECTS__ */
function dateOfBirth() {
  const notADate = 'must be a real calendar date in the form YYYY-MM-DD';
  const date = z.string({ error: (issue) => textProblem(issue.input, 'is required') }).check(
    // A rule, not `z.maxLength`: the description's pattern already bounds the length.
    rule((date: string) => date.length <= MAX_TEXT_LENGTH, TOO_LONG),
    z.regex(/^\d{4}-\d{2}-\d{2}$/, { error: notADate, ...UNTIL_A_PROBLEM }),
    rule(isValidIsoDate, notADate),
    rule((birthday: string) => birthday >= EARLIEST_DATE_OF_BIRTH, `must not be before ${EARLIEST_DATE_OF_BIRTH}`),
    z.describe('YYYY-MM-DD.'),
  );
  return z.pipe(z.transform(readText), date);
}

const notAPoBox = rule(
  (line: string) => !isPoBoxAddress(line),
  'PO Box addresses are not accepted; give a street address',
);

// ---- the fields ---------------------------------------------------------------------------------------

const COUNTRY =
  'Country: English short name (`United States`), ISO alpha-2 or alpha-3; comprehensively sanctioned jurisdictions are refused.';

/**
 * Fields both bodies share, each built once. Every helper building a field is marked free of side effects
 * (`@__NO_SIDE_EFFECTS__`), so a bundle keeps only the fields its body uses: the minor's function builds
 * none of the adult-only fields.
 */
const firstName = requiredText('First name.');
const lastName = requiredText('Last name.');
const email = requiredText(
  'E-mail, unique per platform (compared in lowercase) across all its customers.',
  rule(isValidEmail, 'must be a valid e-mail address'),
);
const addressOne = requiredText('Street address; a PO box is refused.', notAPoBox);
const addressTwo = optionalText('Second address line.', notAPoBox);
const city = requiredText('City.');
const state = optionalText(
  'US state name or USPS code; required for the United States (adults: unless `jurisdiction_code` says it).',
);
const zip = optionalText(
  'US ZIP code (`12345` or `12345-6789`); required for the United States (adults: or `postal_code`).',
);
const idNumber = optionalText(
  'The ID document number: required unless `id_number_type` is `ssn` (whose number may come as `tax_id`) or, for an adult, the customer is a US citizen (`citizenship_code` `US`) whose `tax_id` is an SSN.',
);
const nonUsOtherType = optionalText('What the document is, required for `non_in_other` / `non_us_other`.');
const idIssuingAuthority = optionalText('Who issued the document.');
const dateOfBirthField = dateOfBirth();
const metadata = metadataField();

/** Any JSON object, at most `MAX_METADATA_JSON_LENGTH` characters as JSON. */
/* @__NO_SIDE_EFFECTS__ */
function metadataField() {
  return z.optional(
    z.nullable(
      z.record(z.string(), z.unknown(), { error: 'must be a JSON object' }).check(
        rule(
          (metadata: Record<string, unknown>) => JSON.stringify(metadata).length <= MAX_METADATA_JSON_LENGTH,
          `must be at most ${MAX_METADATA_JSON_LENGTH} characters as JSON`,
        ),
        z.describe(`Any JSON object, at most ${MAX_METADATA_JSON_LENGTH} characters as JSON; echoed as sent.`),
      ),
    ),
  );
}

/**
 * The adult body's fields in the order their problems are listed: the spec's table order, the reference
 * API's fields beside their kin, `state` and `zip` before `country` though their rules depend on it, the tax
 * id after the identity document it may stand in for. The request time's rules are not the fields' own, so
 * the fields are built once.
 */
export const ADULT_FIELDS = {
  first_name: firstName,
  middle_name: optionalText('Middle name.'),
  last_name: lastName,
  email,
  address_one: addressOne,
  address_two: addressTwo,
  city,
  state,
  postal_code: optionalText('Postal code (in place of `zip`).'),
  zip,
  jurisdiction_code: optionalText('ISO 3166-2 (e.g. `US-CA`), in place of or agreeing with `state` and `country`.'),
  // Required unless `jurisdiction_code` names the country (an address rule).
  country: optionalText(COUNTRY),
  citizenship_code: optionalText(
    'ISO 3166-1 alpha-2.',
    rule((code: string) => resolveCitizenship(code) !== undefined, 'must be an ISO 3166-1 alpha-2 country code'),
  ),
  // Whether it is a phone number is a rule (`phoneNumberRules`): its parser is loaded on demand and passed in.
  phone_number: optionalText('With its country code (E.164, e.g. `+15557778888`).'),
  date_of_birth: dateOfBirthField,
  // Required unless the customer is a US citizen whose tax id is an SSN (an identity rule).
  id_number_type: optionalOneOf(
    ADULT_ID_NUMBER_TYPES,
    'The ID document type. Required, except for a US citizen (`citizenship_code` `US`) whose `tax_id` is an SSN, who needs no document; required with `id_number`.',
  ),
  id_number: idNumber,
  non_us_other_type: nonUsOtherType,
  id_issuing_authority: idIssuingAuthority,
  tax_id: optionalText(
    'SSN/ITIN for US citizens and residents, a foreign TIN otherwise; required for US citizens. An ITIN (nine digits starting with 9) needs `id_number_type` and `id_number`. Stored encrypted, answered as its last four characters.',
  ),
  signed_timestamp: signedAt(
    'When the customer agreement was signed (UNIX milliseconds): within the last year, at most a day ahead of server time.',
  ),
  kyc: screeningResult('`fail` is refused. With `kyc_timestamp`.', 'failed KYC'),
  kyc_timestamp: screenedAt('When the platform ran KYC (UNIX milliseconds). With `kyc`.'),
  sanction_screening: screeningResult(
    '`fail` is refused. With `sanction_screening_timestamp`.',
    'failed sanctions screening',
  ),
  sanction_screening_timestamp: screenedAt(
    'When the platform screened (UNIX milliseconds). With `sanction_screening`.',
  ),
  metadata,
};

/** The minor body's fields in the order their problems are listed: the spec's, shared ones as the adult's. */
export const MINOR_FIELDS = {
  first_name: firstName,
  last_name: lastName,
  email,
  address_one: addressOne,
  address_two: addressTwo,
  city,
  state,
  zip,
  country: requiredText(COUNTRY),
  date_of_birth: dateOfBirthField,
  id_number_type: requiredOneOf(ID_NUMBER_TYPES, "The ID document type (the spec's types)."),
  id_number: idNumber,
  non_us_other_type: nonUsOtherType,
  id_issuing_authority: idIssuingAuthority,
  utma_signed_timestamp: signedAt('When the UTMA agreement was signed (UNIX milliseconds, not in the future).'),
  custodian_participant_code: requiredText('An approved adult customer of the same platform.'),
  custodian_relationship: requiredOneOf(CUSTODIAN_RELATIONSHIPS),
  metadata,
};
