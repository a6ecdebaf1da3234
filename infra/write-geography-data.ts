import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** Where the country and state rules read their tables from (`lib/domain/geography.ts`). */
export const GEOGRAPHY_DATA_FILE = fileURLToPath(new URL('../lib/domain/geography-data.json', import.meta.url));

export interface GeographyData {
  /** `[alpha2, alpha3, official English name, other English names...]`, in i18n-iso-countries' English order. */
  countries: string[][];
  /** Letters a typed name may carry, by the plain text they stand for: `{ "o": "ôöò...", "ae": "æ..." }`. */
  nameFoldings: Record<string, string>;
  /** `[USPS code, name]` of every entry states-us lists, in its order. */
  usStates: string[][];
}

const require = createRequire(import.meta.url);

/** The `diacritics` i18n-iso-countries itself loads, wherever npm placed it: its folding is the one to match. */
function countriesDiacritics(): { diacriticsMap: Record<string, string>; remove(text: string): string } {
  return createRequire(require.resolve('i18n-iso-countries'))('diacritics');
}

/**
 * i18n-iso-countries finds a country by name (`getSimpleAlpha2Code`) by comparing the lowercased name with
 * each English name it lists, both passed through `diacritics`' `remove`, which replaces each character
 * above U+007E that its table knows and keeps the rest. Every name folds to lowercase ASCII, so only the
 * table's replacements without a capital letter can ever help a typed name match one: those are kept, the
 * others (`Æ` -> `AE`) left out. That changes no answer: a typed name matches a country's name with this
 * table exactly when it does with the whole one (a character the whole table turns into a capital, this one
 * leaves as it is, and either way the text no longer matches any name).
 */
function nameFoldings(names: string[]): Record<string, string> {
  const { diacriticsMap, remove } = countriesDiacritics();
  const foldings: Record<string, string> = {};
  for (const [char, plain] of Object.entries(diacriticsMap)) {
    if (char.charCodeAt(0) <= 0x7e || plain === '' || plain !== plain.toLowerCase()) continue;
    if (remove(char) !== plain) throw new Error(`diacritics folds ${char} unlike its own table: check the derivation`);
    foldings[plain] = (foldings[plain] ?? '') + char;
  }
  const folded = new Map(Object.entries(foldings).flatMap(([plain, chars]) => [...chars].map((char) => [char, plain])));
  for (const name of names) {
    const lower = name.toLowerCase();
    const ours = lower.replace(/[^\u0000-\u007e]/g, (char) => folded.get(char) ?? char);
    if (ours !== remove(lower) || /[^\u0000-\u007e]/.test(ours))
      throw new Error(`the name ${name} does not fold to ASCII as diacritics folds it: check the derivation`);
  }
  return foldings;
}

/**
 * What `lib/domain/geography.ts` reads of three libraries, at a fraction of their size in a bundle: the
 * English names and the alpha-2 and alpha-3 codes of i18n-iso-countries (not its numeric codes, its other
 * locales or its API), the part of its `diacritics` table a country name can need, and the codes and names
 * of states-us. A country the library lacks a code or an English name for is left out, as the library's
 * lookups find no such country either.
 */
export function geographyData(): GeographyData {
  const codes = require('i18n-iso-countries/codes.json') as string[][];
  const { countries: names } = require('i18n-iso-countries/langs/en.json') as {
    countries: Record<string, string | string[]>;
  };
  const { states } = require('states-us') as { states: { abbreviation: string; name: string }[] };

  const alpha3ByAlpha2 = new Map(codes.map(([alpha2, alpha3]) => [alpha2!, alpha3!]));
  const alpha3s = new Set(alpha3ByAlpha2.values());
  // The library keeps the last of a repeated code; fail instead of choosing for it.
  if (alpha3ByAlpha2.size !== codes.length || alpha3s.size !== codes.length)
    throw new Error('i18n-iso-countries lists an alpha-2 or alpha-3 code twice: check the derivation');

  const countries = Object.entries(names)
    .filter(([alpha2]) => alpha3ByAlpha2.has(alpha2))
    .map(([alpha2, listed]) => [alpha2, alpha3ByAlpha2.get(alpha2)!, ...(Array.isArray(listed) ? listed : [listed])]);
  return {
    countries,
    nameFoldings: nameFoldings(countries.flatMap(([, , ...countryNames]) => countryNames)),
    usStates: states.map((state) => [state.abbreviation, state.name]),
  };
}

/** One line, like `phone-metadata.json`: `npx tsx infra/write-geography-data.ts` after upgrading a library. */
export function geographyDataText(): string {
  return `${JSON.stringify(geographyData())}\n`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync(GEOGRAPHY_DATA_FILE, geographyDataText());
  console.log(GEOGRAPHY_DATA_FILE);
}
