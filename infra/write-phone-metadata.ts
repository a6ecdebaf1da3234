import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** Where the customer rules read their phone metadata from (`lib/domain/phone-numbers.ts`). */
export const PHONE_METADATA_FILE = fileURLToPath(new URL('../lib/domain/phone-metadata.json', import.meta.url));

/** Indexes in a country's entry of libphonenumber-js's metadata (version 4). */
const FIELD = { iddPrefix: 1, possibleLengths: 3, formats: 4, types: 11 } as const;

type Plans = Record<string, unknown[]>;

/**
 * The countries whose number types the customer rules never read. Parsing reads a country's types (fixed
 * line, mobile... patterns) only to tell apart the countries that share a calling code (US, CA, JM... on
 * +1), and of that choice `isPossible()` reads only the chosen country's possible lengths. Where every
 * country of a calling code has the same lengths, the choice changes no answer (+39 Italy and Vatican
 * City, +590 Guadeloupe, Saint Barthélemy and Saint Martin...); where they differ (+1, +44, +61, +290,
 * +599), every type is kept.
 */
function countriesNotNeedingTypes(callingCodes: Record<string, string[]>, countries: Plans): Set<string> {
  const lengthsOf = (country: string) => JSON.stringify(countries[country]![FIELD.possibleLengths]);
  return new Set(
    Object.values(callingCodes).flatMap((sharing) =>
      sharing.every((country) => lengthsOf(country) === lengthsOf(sharing[0]!)) ? sharing : [],
    ),
  );
}

/**
 * The phone metadata the customer rules need: libphonenumber-js's `min` build without what they never read.
 * The number formats, which only formatting reads (`format()`, `AsYouType`): 51 of its 83 KB, countries and
 * non-geographic calling codes alike. The international dialling prefixes (`011`, `00`), which parsing reads
 * only for a number without `+`, and `parsePhoneNumber` always passes one with `+`. The number types of the
 * countries `countriesNotNeedingTypes` names. Parsing an international number and `isPossible()` read the
 * calling codes, each country's national number pattern, possible lengths, national prefix rules, leading
 * digits and the remaining types, all kept as they are, so a number is accepted or refused exactly as with
 * `libphonenumber-js/min` (`test/unit/phone-metadata.test.ts`).
 */
export function phoneValidationMetadata(): Record<string, unknown> {
  const min = createRequire(import.meta.url)('libphonenumber-js/metadata.min.json') as {
    version: number;
    country_calling_codes: Record<string, string[]>;
    countries: Plans;
    nonGeographic: Plans;
  };
  if (min.version !== 4)
    throw new Error(`libphonenumber-js metadata version ${min.version}: check which index holds which field`);
  const withoutTypes = countriesNotNeedingTypes(min.country_calling_codes, min.countries);
  const dropped = (country: string, i: number) =>
    i === FIELD.formats || i === FIELD.iddPrefix || (i === FIELD.types && withoutTypes.has(country));
  const without = (plans: Plans) =>
    Object.fromEntries(
      Object.entries(plans).map(([code, plan]) => [code, plan.map((field, i) => (dropped(code, i) ? 0 : field))]),
    );
  return { ...min, countries: without(min.countries), nonGeographic: without(min.nonGeographic) };
}

/** One line, like the package's own JSON: `npm run phone-metadata` after upgrading libphonenumber-js. */
export function phoneMetadataText(): string {
  return `${JSON.stringify(phoneValidationMetadata())}\n`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync(PHONE_METADATA_FILE, phoneMetadataText());
  console.log(PHONE_METADATA_FILE);
}
