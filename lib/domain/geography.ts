// The country and state tables these rules read: i18n-iso-countries' English names with the alpha-2 and
// alpha-3 codes, the part of its `diacritics` table a country name can need, and states-us' codes and names.
// `infra/write-geography-data.ts` derives them from the installed packages: 12 KiB in a bundle where the
// packages took 28, and every country and state is found or refused as with the packages' own lookups
// (test/unit/geography-data.test.ts).
import geographyData from './geography-data.json' with { type: 'json' };

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

/** The library's letter folding: `ô` reads as `o`, `æ` as `ae`; anything up to U+007E is kept as typed. */
const plainByLetter: ReadonlyMap<string, string> = new Map(
  Object.entries(geographyData.nameFoldings).flatMap(([plain, letters]) =>
    [...letters].map((letter) => [letter, plain]),
  ),
);

/** Lowercase without diacritics, as i18n-iso-countries compares names (`Côte d'Ivoire` = `cote d'ivoire`). */
function foldName(name: string): string {
  return name.toLowerCase().replace(/[^\u0000-\u007e]/g, (letter) => plainByLetter.get(letter) ?? letter);
}

/** Each country by its alpha-2 code, each alpha-3 code's alpha-2, and each English name's (folded) alpha-2. */
const countryTables = (() => {
  const byAlpha2 = new Map<string, Readonly<Country>>();
  const alpha2ByAlpha3 = new Map<string, string>();
  const alpha2ByFoldedName = new Map<string, string>();
  for (const [alpha2, alpha3, ...names] of geographyData.countries) {
    byAlpha2.set(alpha2!, { alpha2: alpha2!, alpha3: alpha3!, name: names[0]! });
    alpha2ByAlpha3.set(alpha3!, alpha2!);
    for (const folded of names.map(foldName)) {
      // The library answers with the first country listing a name (`Congo` is CG's before CD's).
      if (!alpha2ByFoldedName.has(folded)) alpha2ByFoldedName.set(folded, alpha2!);
    }
  }
  return { byAlpha2, alpha2ByAlpha3, alpha2ByFoldedName };
})();

/** A country of its own for each answer, as the library's lookups gave: a caller may keep or change it. */
function countryFromAlpha2(alpha2: string | undefined): Country | undefined {
  const country = alpha2 === undefined ? undefined : countryTables.byAlpha2.get(alpha2);
  return country && { ...country };
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
  if (key.length === 2 && countryTables.byAlpha2.has(key)) return countryFromAlpha2(key);
  if (key.length === 3 && countryTables.alpha2ByAlpha3.has(key))
    return countryFromAlpha2(countryTables.alpha2ByAlpha3.get(key));
  // Names ignore diacritics too, so `Cote d'Ivoire` and `Turkiye` are found.
  return countryFromAlpha2(countryTables.alpha2ByFoldedName.get(foldName(key)));
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
  for (const [code, name] of geographyData.usStates) {
    if (EXCLUDED_USPS_CODES.has(code!)) continue;
    const state = { code: code!, name: name! };
    byKey.set(normaliseKey(code!), state);
    byKey.set(normaliseKey(name!), state);
  }
  return byKey;
})();

/** Accepts a USPS code (`CA`, `dc`) or a full name (`California`, `district of columbia`). */
export function resolveUsState(input: string): UsState | undefined {
  return usStatesByKey.get(normaliseKey(input));
}
