import {
  idTypeProblem,
  type Jurisdiction,
  REFERENCE_ID_NUMBER_TYPES,
  REFERENCE_OTHER_ID_NUMBER_TYPE,
  resolveCitizenship,
  resolveJurisdiction,
  type ReferenceIdNumberType,
} from './customer-identity.js';
import { ADULT_AGE_YEARS, type IdNumberType, type ScreeningResult } from './customer-request-fields.js';
import { type Country, isSanctionedCountry, resolveCountry, resolveUsState } from './geography.js';
import { isItin, maskedTaxId, parseTaxId, taxIdLastFour } from './tax-ids.js';

/**
 * The onboarding rules beyond a field's own checks (`customer-request-fields.ts`): those spanning fields (US
 * state and zip, country and jurisdiction, identity document, tax id, a platform check and its time), those
 * of the request time (age, agreement and check times), and an adult's phone number, read by the parser the
 * request brings. They run once every field has passed or failed its own checks. Pure, and blind to zod: they
 * read a `BodyReading` and return problems and what they worked out, which the normalised customer is made of.
 */

/** `field: message`, listed after the field's own problems, or after those of `listedWith` when it is given. */
export interface Problem {
  field: string;
  message: string;
  listedWith?: string;
}

/** The fields the rules read, with the types their own checks guarantee. */
interface GivenFields {
  phone_number?: string;
  date_of_birth?: string;
  state?: string;
  postal_code?: string;
  zip?: string;
  jurisdiction_code?: string;
  country?: string;
  citizenship_code?: string;
  id_number_type?: IdNumberType;
  id_number?: string;
  non_us_other_type?: string;
  tax_id?: string;
  signed_timestamp?: number;
  utma_signed_timestamp?: number;
  kyc?: ScreeningResult;
  kyc_timestamp?: number;
  sanction_screening?: ScreeningResult;
  sanction_screening_timestamp?: number;
}

interface BodyReading<Given = GivenFields> {
  /** The fields that passed their own checks and carry a value (absent, `null` and blank ones left out). */
  given: Given;
  /** Fields refused by their own checks: their problem is listed already, and rules take them as not given. */
  failed: ReadonlySet<string>;
  /** Fields sent blank (read as `null`): not given, but `must not be empty` when a rule requires them. */
  blank: ReadonlySet<string>;
}

type Given<T> = { [K in keyof T]?: Exclude<T[K], null | undefined> };

/** How the rules see a parsed body whose fields in `failed` were refused by their own checks. */
export function readBody<T extends object>(body: T, failed: ReadonlySet<string>): BodyReading<Given<T>> {
  const given: Record<string, unknown> = {};
  const blank = new Set<string>();
  for (const [field, value] of Object.entries(body)) {
    if (failed.has(field)) continue;
    if (value === null) blank.add(field);
    else if (value !== undefined) given[field] = value;
  }
  return { given: given as Given<T>, failed, blank };
}

/**
 * A phone number in E.164, or undefined when it can't be one: `parsePhoneNumber` of `phone-numbers.ts`, which
 * is passed in rather than imported, so that a function loads it only for a body with a phone number.
 */
export type PhoneNumberParser = (input: string) => string | undefined;

/** Whose body the rules read and when: an adult's (whose phone number `parsePhoneNumber` reads) or a minor's. */
export type CustomerRequest =
  | { kind: 'adult'; nowMs: number; parsePhoneNumber: PhoneNumberParser }
  | { kind: 'minor'; nowMs: number };

export type CustomerKind = CustomerRequest['kind'];

/** What the rules worked out on the way: complete only when they found no problem. */
export interface Derived {
  /** The country resolved from `country`, or from `jurisdiction_code` when no country was given. */
  country?: Country;
  /** `country` as sent, or the resolved country's name when `jurisdiction_code` named it. */
  countryName?: string;
  /** USPS code of the state, for US addresses. */
  stateCode?: string;
  jurisdiction?: Jurisdiction;
  /** ISO alpha-2, upper-cased. */
  citizenship?: string;
  /** The tax id in its compact form (for an `ssn`, possibly from `id_number`). */
  taxId?: string;
  /** `id_number` as sent, or for an `ssn` the tax id masked to its last four. */
  idNumber?: string;
  /** An adult's `phone_number` in E.164. */
  phoneE164?: string;
}

/** Every problem with the body `reading` describes beyond its fields' own, and what the rules worked out. */
export function customerRules(
  reading: BodyReading,
  request: CustomerRequest,
): { problems: Problem[]; derived: Derived } {
  const { kind, nowMs } = request;
  const problems = new Problems(reading);
  // A minor's body has no phone number.
  const phoneE164 =
    request.kind === 'adult' ? phoneNumberRules(reading.given, request.parsePhoneNumber, problems) : undefined;
  const place = countryRules(reading.given, problems);
  const isUs = place.country?.alpha2 === 'US';
  const stateCode = stateRules(reading.given, place.jurisdiction, isUs, problems);
  postalCodeRules(reading.given, isUs, problems);
  const citizenshipText = reading.given.citizenship_code;
  const citizenship = citizenshipText === undefined ? undefined : resolveCitizenship(citizenshipText);
  const document = identityDocumentRules(reading, { country: place.country, citizenship }, kind, problems);
  const taxId = taxIdRules(reading.given, { isSsn: document.isSsn, citizenship, isUs }, problems);
  screeningRules(reading, problems);
  timeRules(reading.given, kind, nowMs, problems);
  const idNumber = document.isSsn
    ? taxId === undefined
      ? undefined
      : maskedTaxId(taxIdLastFour(taxId))
    : reading.given.id_number;
  return { problems: problems.list, derived: { ...place, stateCode, citizenship, taxId, idNumber, phoneE164 } };
}

class Problems {
  readonly list: Problem[] = [];
  constructor(private readonly reading: BodyReading) {}

  add(field: string, message: string, listedWith?: string): void {
    this.list.push({ field, message, ...(listedWith !== undefined && { listedWith }) });
  }

  /** `field` must be given: says `whenMissing` when absent, `must not be empty` when blank. */
  require(field: keyof GivenFields, whenMissing: string): void {
    const { given, failed, blank } = this.reading;
    if (given[field] !== undefined || failed.has(field)) return;
    this.add(field, blank.has(field) ? 'must not be empty' : whenMissing);
  }
}

/** A phone number, when given, is one (`PhoneNumberParser`): its E.164 form. */
function phoneNumberRules(
  given: GivenFields,
  parsePhoneNumber: PhoneNumberParser,
  problems: Problems,
): string | undefined {
  if (given.phone_number === undefined) return undefined;
  const e164 = parsePhoneNumber(given.phone_number);
  if (e164 === undefined)
    problems.add('phone_number', 'must be a phone number with its country code (E.164, e.g. +15557778888)');
  return e164;
}

/**
 * The country, from `country` or from an adult's `jurisdiction_code` (ISO 3166-2, the reference API's),
 * which names the country too: it stands in for `state` and `country`, or must agree with them.
 */
function countryRules(
  given: GivenFields,
  problems: Problems,
): { country?: Country; countryName?: string; jurisdiction?: Jurisdiction } {
  const { jurisdiction_code: jurisdictionText, country: countryText } = given;
  const jurisdiction = jurisdictionText === undefined ? undefined : resolveJurisdiction(jurisdictionText);
  if (jurisdictionText !== undefined && jurisdiction === undefined) {
    problems.add(
      'jurisdiction_code',
      'must be the ISO 3166-2 code of a US state, DC or inhabited territory (e.g. US-CA)',
    );
  }
  if (jurisdictionText === undefined) problems.require('country', 'is required');
  const countryFromText = countryText === undefined ? undefined : resolveCountry(countryText);
  const country =
    countryText === undefined ? jurisdiction && resolveCountry(jurisdiction.countryAlpha2) : countryFromText;
  if (countryText !== undefined && countryFromText === undefined) {
    problems.add('country', 'must be a supported country (English name, ISO alpha-2 or alpha-3 code)');
  } else if (country !== undefined && isSanctionedCountry(country.alpha2)) {
    problems.add('country', `customers in ${country.name} cannot be onboarded (sanctioned jurisdiction)`);
  } else if (jurisdiction && country && country.alpha2 !== jurisdiction.countryAlpha2) {
    const disagreement = `${jurisdiction.code} disagrees with country (${countryText}); give one, or both agreeing`;
    problems.add('jurisdiction_code', disagreement, 'country');
  }
  return { country, countryName: countryText ?? country?.name, jurisdiction };
}

const REQUIRED_FOR_US = 'is required when country is the United States';

/** A US address names its state (or its jurisdiction does); the USPS code of that state, if known. */
function stateRules(
  given: GivenFields,
  jurisdiction: Jurisdiction | undefined,
  isUs: boolean,
  problems: Problems,
): string | undefined {
  if (!isUs) return undefined;
  if (given.jurisdiction_code === undefined) problems.require('state', REQUIRED_FOR_US);
  let stateCode: string | undefined;
  if (given.state !== undefined) {
    stateCode = resolveUsState(given.state)?.code;
    if (stateCode === undefined)
      problems.add('state', 'must be a US state, DC or inhabited territory (name or USPS code)');
  }
  if (jurisdiction === undefined) return stateCode;
  if (stateCode !== undefined && stateCode !== jurisdiction.state.code) {
    const disagreement = `${jurisdiction.code} disagrees with state (${given.state}); give one, or both agreeing`;
    problems.add('jurisdiction_code', disagreement, 'state');
  }
  return stateCode ?? jurisdiction.state.code;
}

const US_ZIP_PATTERN = /^\d{5}(?:-\d{4})?$/;

/** A postal code outside the US: 3 to 12 letters and digits, optionally grouped (`SW1A 1AA`, `10115`). */
const POSTAL_CODE_PATTERN = /^(?=(?:[ -]?[A-Za-z0-9]){3,12}$)[A-Za-z0-9](?:[ -]?[A-Za-z0-9])*$/;

/** A US address has a ZIP (the reference API's `postal_code` may carry it); elsewhere both are free. */
function postalCodeRules(given: GivenFields, isUs: boolean, problems: Problems): void {
  const { zip, postal_code: postalCode } = given;
  if (isUs && postalCode === undefined) problems.require('zip', REQUIRED_FOR_US);
  const usZip = 'must be NNNNN or NNNNN-NNNN for a US address';
  if (isUs && zip !== undefined && !US_ZIP_PATTERN.test(zip)) problems.add('zip', usZip);
  // Listed after the zip's problems: the two say the same thing, `postal_code` being the reference API's.
  if (postalCode === undefined) return;
  if (isUs && !US_ZIP_PATTERN.test(postalCode)) problems.add('postal_code', usZip, 'zip');
  else if (!POSTAL_CODE_PATTERN.test(postalCode)) {
    problems.add('postal_code', 'must be 3 to 12 letters and digits (spaces or hyphens may group them)', 'zip');
  }
}

/**
 * Whether the customer must present an identity document (`id_number_type` and `id_number`), and what a
 * missing one is told. The reference API identifies a US citizen by the SSN in `tax_id`:
 * its US-citizen track has no `id_number` and an optional `id_number_type`. An ITIN as the tax id needs the
 * document again, and non-US citizens always present one. `citizenship_code` is optional here, so a
 * customer who does not say they are a US citizen presents a document as before. A US citizen who gives no
 * tax id is told only that `tax_id` is required: an SSN there is all that is missing.
 */
function identityDocumentRule(
  citizenship: string | undefined,
  taxText: string | undefined,
): { required: boolean; whenMissing: string } {
  if (citizenship !== 'US') return { required: true, whenMissing: 'is required' };
  if (taxText !== undefined && isItin(taxText))
    return { required: true, whenMissing: 'is required when tax_id is an ITIN' };
  return { required: false, whenMissing: 'is required' };
}

/** The ID type whose free-form description travels in `non_us_other_type`. */
const OTHER_ID_NUMBER_TYPE: IdNumberType = 'non_in_other';
/** Types that need `non_us_other_type`: the spec's `non_in_other` and the reference API's `non_us_other`. */
const OTHER_ID_NUMBER_TYPES: ReadonlySet<string> = new Set([OTHER_ID_NUMBER_TYPE, REFERENCE_OTHER_ID_NUMBER_TYPE]);

function isReferenceIdType(type: IdNumberType): type is ReferenceIdNumberType {
  return (REFERENCE_ID_NUMBER_TYPES as readonly string[]).includes(type);
}

/** The identity document: when it is required, whether its type suits the customer, its description. */
function identityDocumentRules(
  { given, failed }: BodyReading,
  customer: { country?: Country; citizenship?: string },
  kind: CustomerKind,
  problems: Problems,
): { isSsn: boolean } {
  const document = identityDocumentRule(customer.citizenship, given.tax_id);
  // A document number says nothing without its type, so a number sent (even a refused one) needs one.
  const numberSent = given.id_number !== undefined || failed.has('id_number');
  const typeMissing = document.required ? document.whenMissing : numberSent ? 'is required with id_number' : undefined;
  if (typeMissing !== undefined) problems.require('id_number_type', typeMissing);
  const type = given.id_number_type;
  if (type !== undefined && customer.country !== undefined && isReferenceIdType(type)) {
    const facts = { countryAlpha2: customer.country.alpha2, citizenshipAlpha2: customer.citizenship };
    const problem = idTypeProblem(type, facts);
    if (problem !== undefined) problems.add('id_number_type', problem);
  }
  // For an `ssn` the ID number is the tax id: it may come in either field (see `taxIdRules`).
  const isSsn = type === 'ssn';
  if (document.required && !isSsn) problems.require('id_number', document.whenMissing);
  if (type !== undefined && OTHER_ID_NUMBER_TYPES.has(type)) {
    problems.require('non_us_other_type', `is required when id_number_type is ${type}`);
    return { isSsn };
  }
  // Not said when the type itself was refused (that problem is listed already).
  const typeLeftOut = type === undefined && !failed.has('id_number_type') && typeMissing === undefined;
  if ((type !== undefined || typeLeftOut) && given.non_us_other_type !== undefined) {
    const others =
      kind === 'adult' ? `${OTHER_ID_NUMBER_TYPE} or ${REFERENCE_OTHER_ID_NUMBER_TYPE}` : OTHER_ID_NUMBER_TYPE;
    problems.add('non_us_other_type', `is only allowed when id_number_type is ${others}`);
  }
  return { isSsn };
}

/**
 * Tax id: an SSN/ITIN for US citizens and residents (unless another citizenship is given), a foreign TIN
 * otherwise; the compact form, if valid. Problems name the field but never repeat its value: error texts
 * reach logs. Only adults send one (a minor's body has no `tax_id`, and no `ssn` ID type).
 */
function taxIdRules(
  given: GivenFields,
  customer: { isSsn: boolean; citizenship?: string; isUs: boolean },
  problems: Problems,
): string | undefined {
  const { isSsn, citizenship } = customer;
  const taxText = given.tax_id;
  const usTaxId = isSsn || citizenship === 'US' || (citizenship === undefined && customer.isUs);
  const parsedTax = taxText === undefined ? undefined : parseTaxId(taxText, usTaxId);
  let taxId: string | undefined;
  if (parsedTax && 'problem' in parsedTax) problems.add('tax_id', parsedTax.problem);
  else taxId = parsedTax?.value;
  const numberText = given.id_number;
  if (isSsn && numberText !== undefined) {
    const parsedNumber = parseTaxId(numberText, true);
    if ('problem' in parsedNumber) problems.add('id_number', `for an ssn ${parsedNumber.problem}`, 'tax_id');
    else if (taxId !== undefined && taxId !== parsedNumber.value)
      problems.add('tax_id', 'differs from id_number; for an ssn they are the same number');
    else if (taxText === undefined) taxId = parsedNumber.value;
  }
  if (taxId !== undefined || taxText !== undefined) return taxId;
  if (isSsn && numberText === undefined)
    problems.add('tax_id', 'is required when id_number_type is ssn (or give the SSN as id_number)');
  else if (citizenship === 'US') problems.add('tax_id', 'is required when citizenship_code is US');
  return taxId;
}

/**
 * A check the platform ran (`kyc`, `sanction_screening`) comes with its `<field>_timestamp`: both or neither.
 * Customers are approved at once, so a failed check is refused (by the field's own checks).
 */
function screeningRules({ given, failed }: BodyReading, problems: Problems): void {
  const pairs = [
    ['kyc', 'kyc_timestamp'],
    ['sanction_screening', 'sanction_screening_timestamp'],
  ] as const;
  for (const [result, time] of pairs) {
    const resultSent = given[result] !== undefined || failed.has(result);
    const timeSent = given[time] !== undefined || failed.has(time);
    if (resultSent && !timeSent) problems.add(time, `is required with ${result}`);
    if (timeSent && !resultSent) problems.add(result, `is required with ${time}`);
  }
}

/**
 * The reference API's window for the agreement, KYC and screening times (`signed_timestamp`,
 * `kyc_timestamp`, `sanction_screening_timestamp`): at most a year old, at most a day ahead.
 */
const REFERENCE_MAX_AGE_MS = 365 * 24 * 3_600_000;
const REFERENCE_MAX_AHEAD_MS = 24 * 3_600_000;

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

/**
 * The rules of the request time `nowMs`, for fields that passed their own checks: a birthday not after the
 * request day (UTC) and an adult's or a minor's age on it, the UTMA signature not in the future, and the
 * reference API's window for the agreement and the platform's checks.
 */
function timeRules(given: GivenFields, kind: CustomerKind, nowMs: number, problems: Problems): void {
  if (given.date_of_birth !== undefined) {
    const problem = birthdayProblem(given.date_of_birth, kind, nowMs);
    if (problem !== undefined) problems.add('date_of_birth', problem);
  }
  if (given.utma_signed_timestamp !== undefined && given.utma_signed_timestamp > nowMs)
    problems.add('utma_signed_timestamp', 'must not be in the future');
  for (const field of ['signed_timestamp', 'kyc_timestamp', 'sanction_screening_timestamp'] as const) {
    const ms = given[field];
    if (ms !== undefined && (ms < nowMs - REFERENCE_MAX_AGE_MS || ms > nowMs + REFERENCE_MAX_AHEAD_MS))
      problems.add(field, 'must be within the last year (and at most a day ahead of server time)');
  }
}

function birthdayProblem(birthday: string, kind: CustomerKind, nowMs: number): string | undefined {
  // `YYYY-MM-DD` orders correctly as text.
  if (birthday > new Date(nowMs).toISOString().slice(0, 10)) return 'must not be in the future';
  const adult = ageInYearsOn(birthday, nowMs) >= ADULT_AGE_YEARS;
  if (kind === 'adult' && !adult) return `customer must be at least ${ADULT_AGE_YEARS} years old`;
  if (kind === 'minor' && adult) return `a minor must be under ${ADULT_AGE_YEARS} years old`;
  return undefined;
}
