import { resolveCountry, resolveUsState, type UsState } from './geography.js';

/**
 * The reference API's vocabulary for an adult customer: the ID types its clients send,
 * which customers may use each, ISO 3166-2 jurisdiction codes and citizenship. Pure. Its phone numbers are read
 * by `phone-numbers.ts`, which the customer rules are given rather than import (it is loaded on demand).
 */

/** The reference API's ID types, accepted for adults beside the spec's (the older `ssn` included). */
export const REFERENCE_ID_NUMBER_TYPES = [
  'us_drivers_license',
  'us_passport',
  'us_passport_card',
  'us_permanent_resident_card',
  'us_border_crossing_card',
  'us_alien_card',
  'us_id_card',
  'non_us_passport',
  'non_us_other',
  'passport',
  'eu_drivers_license',
  'national_id',
  'ssn',
] as const;
export type ReferenceIdNumberType = (typeof REFERENCE_ID_NUMBER_TYPES)[number];

/** The reference API's "other non-US document", described in `non_us_other_type` like the spec's `non_in_other`. */
export const REFERENCE_OTHER_ID_NUMBER_TYPE: ReferenceIdNumberType = 'non_us_other';

/**
 * EU member states plus the EEA states whose licences the EU recognises (Iceland, Liechtenstein, Norway):
 * where an `eu_drivers_license` is issued. A membership fact, not reference data any library we use carries.
 */
const EEA_ALPHA2: ReadonlySet<string> = new Set([
  'AT',
  'BE',
  'BG',
  'HR',
  'CY',
  'CZ',
  'DK',
  'EE',
  'FI',
  'FR',
  'DE',
  'GR',
  'HU',
  'IE',
  'IT',
  'LV',
  'LT',
  'LU',
  'MT',
  'NL',
  'PL',
  'PT',
  'RO',
  'SK',
  'SI',
  'ES',
  'SE',
  'IS',
  'LI',
  'NO',
]);

interface IdentityFacts {
  /** ISO alpha-2 of the customer's country of residence. */
  countryAlpha2: string;
  /** ISO alpha-2 of the citizenship, when the client gave it. */
  citizenshipAlpha2?: string;
}

/**
 * Why a customer with these facts cannot present this ID type, or undefined when they can. Residence rules
 * follow who issues the document (a US state issues driving licences and ID cards to its residents, the EU
 * to EEA residents); citizenship rules are checked only when `citizenship_code` was given, since a
 * passport holder may live anywhere.
 */
export function idTypeProblem(type: ReferenceIdNumberType, facts: IdentityFacts): string | undefined {
  const livesInUs = facts.countryAlpha2 === 'US';
  const citizen = facts.citizenshipAlpha2;
  switch (type) {
    case 'us_drivers_license':
    case 'us_id_card':
      return livesInUs ? undefined : `${type} is issued to US residents; country is ${facts.countryAlpha2}`;
    case 'us_permanent_resident_card':
    case 'us_alien_card':
      if (!livesInUs) return `${type} is issued to US residents; country is ${facts.countryAlpha2}`;
      return citizen === 'US' ? `${type} is not issued to US citizens` : undefined;
    case 'us_passport':
    case 'us_passport_card':
      return citizen === undefined || citizen === 'US'
        ? undefined
        : `${type} is issued to US citizens; citizenship_code is ${citizen}`;
    case 'ssn':
      return livesInUs || citizen === 'US' ? undefined : 'ssn is for US residents and citizens';
    case 'us_border_crossing_card':
    case 'non_us_passport':
    case 'non_us_other':
      return citizen === 'US' ? `${type} is for customers who are not US citizens; citizenship_code is US` : undefined;
    case 'eu_drivers_license':
      return EEA_ALPHA2.has(facts.countryAlpha2)
        ? undefined
        : `eu_drivers_license is issued to residents of the EU/EEA; country is ${facts.countryAlpha2}`;
    case 'passport':
    case 'national_id':
      return undefined;
  }
}

// ---- jurisdiction codes --------------------------------------------------------------------------------

export interface Jurisdiction {
  /** Upper-cased ISO 3166-2 code, e.g. `US-CA`. */
  code: string;
  countryAlpha2: 'US';
  state: UsState;
}

/**
 * An ISO 3166-2 code of a US state, DC or inhabited territory (`US-CA`, `us-pr`), as the reference API
 * lists them. The reference enumerates only US subdivisions, even for its EU customers, so a subdivision of
 * any other country is unknown here: a 400 rather than a code we could not check.
 */
export function resolveJurisdiction(input: string): Jurisdiction | undefined {
  const match = /^([A-Za-z]{2})-([A-Za-z0-9]{1,3})$/.exec(input.trim());
  if (!match || match[1]!.toUpperCase() !== 'US') return undefined;
  const state = resolveUsState(match[2]!);
  // `resolveUsState` also takes names; a subdivision code is only ever the USPS code.
  if (!state || state.code !== match[2]!.toUpperCase()) return undefined;
  return { code: `US-${state.code}`, countryAlpha2: 'US', state };
}

/** ISO 3166-1 alpha-2 only, as the reference API's `citizenship_code` is (`US`, `de`). */
export function resolveCitizenship(input: string): string | undefined {
  const code = input.trim().toUpperCase();
  return /^[A-Z]{2}$/.test(code) && resolveCountry(code) ? code : undefined;
}
