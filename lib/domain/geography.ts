// The package's `main` (entry-node.js) registers all ~80 locales, which esbuild bundles as ~740 KB minified.
// Its plain `index.js` (the `browser` entry) has no locales, so we load only English: ~28 KB in the bundle.
import countries from 'i18n-iso-countries/index.js';
import en from 'i18n-iso-countries/langs/en.json' with { type: 'json' };
import { states as usStatesAndTerritories } from 'states-us';

countries.registerLocale(en);

export interface Country {
  alpha2: string;
  alpha3: string;
  /** The library's official English name, e.g. `United States of America`. */
  name: string;
}

export interface UsState {
  /** USPS code, e.g. `CA`. */
  code: string;
  name: string;
}

/** Case and run-of-spaces differences are not meaningful in a country or state a person typed. */
function normaliseKey(input: string): string {
  return input.trim().replace(/\s+/g, ' ').toUpperCase();
}

function hasOwn(object: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(object, key);
}

const alpha2ToAlpha3 = countries.getAlpha2Codes();
const alpha3ToAlpha2 = countries.getAlpha3Codes();

function countryFromAlpha2(alpha2: string): Country | undefined {
  const alpha3 = alpha2ToAlpha3[alpha2];
  const name = countries.getName(alpha2, 'en', { select: 'official' });
  return alpha3 && name ? { alpha2, alpha3, name } : undefined;
}

/**
 * Accepts an ISO 3166-1 alpha-2 or alpha-3 code or any English name the library lists for the country
 * (`United States`, `USA`, `United States of America`, `Czechia`, `Turkey`/`Türkiye`), case-insensitively.
 * Numeric codes are refused: the spec asks for a name, and a number typed into `country` is far more
 * likely a mistake than an ISO numeric code.
 */
export function resolveCountry(input: string): Country | undefined {
  const key = normaliseKey(input);
  if (key === '') return undefined;
  if (key.length === 2 && hasOwn(alpha2ToAlpha3, key)) return countryFromAlpha2(key);
  if (key.length === 3 && hasOwn(alpha3ToAlpha2, key)) return countryFromAlpha2(alpha3ToAlpha2[key]!);
  // The "simple" lookup also ignores diacritics, so `Cote d'Ivoire` and `Turkiye` are found.
  const alpha2 = countries.getSimpleAlpha2Code(key, 'en');
  return alpha2 ? countryFromAlpha2(alpha2) : undefined;
}

/**
 * Jurisdictions under comprehensive (country-wide) US sanctions, per OFAC's sanctions programs: Cuba
 * (CACR), Iran (ITSR), North Korea (NKSR) and Syria. This is a compliance policy, not reference data,
 * which is why it lives here rather than in a library.
 *
 * - Syria: OFAC's Syria program was revoked in mid-2025 (Executive Order 14312), but we keep rejecting it
 *   until compliance signs off on lifting it; removing the code is the whole change.
 * - Crimea and the so-called DNR/LNR regions are also comprehensively sanctioned, but they are regions of
 *   Ukraine with no ISO 3166-1 code, so a country check cannot catch them; that needs address screening.
 * - Russia, Belarus, Venezuela etc. are list-based (targeted) programs, handled by sanctions screening of
 *   the person, not by refusing the whole country.
 */
const COMPREHENSIVELY_SANCTIONED_ALPHA2: ReadonlySet<string> = new Set(['CU', 'IR', 'KP', 'SY']);

export function isSanctionedCountry(alpha2: string): boolean {
  return COMPREHENSIVELY_SANCTIONED_ALPHA2.has(alpha2.trim().toUpperCase());
}

/**
 * US states accepted when the country is the United States: the 50 states, DC, and the five inhabited
 * territories (American Samoa, Guam, Northern Mariana Islands, Puerto Rico, US Virgin Islands). The
 * territories are in because residents are US nationals or citizens with USPS addresses and ZIP codes,
 * and the upstream API's jurisdiction list includes them (US-AS, US-GU, US-MP, US-PR, US-VI).
 * Palau is out: states-us lists it as a territory, but it has been a sovereign state since 1994 with its
 * own ISO code (PW), so it must be submitted as a country. Military (AA/AE/AP) codes are not in the
 * library and are not accepted.
 */
const EXCLUDED_USPS_CODES: ReadonlySet<string> = new Set(['PW']);

const usStatesByKey: ReadonlyMap<string, UsState> = (() => {
  const byKey = new Map<string, UsState>();
  for (const entry of usStatesAndTerritories) {
    if (EXCLUDED_USPS_CODES.has(entry.abbreviation)) continue;
    const state = { code: entry.abbreviation, name: entry.name };
    byKey.set(normaliseKey(entry.abbreviation), state);
    byKey.set(normaliseKey(entry.name), state);
  }
  return byKey;
})();

/** Accepts a USPS code (`CA`, `dc`) or a full name (`California`, `district of columbia`). */
export function resolveUsState(input: string): UsState | undefined {
  return usStatesByKey.get(normaliseKey(input));
}
