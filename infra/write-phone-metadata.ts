import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** Where the customer rules read their phone metadata from (`lib/domain/customer-identity.ts`). */
export const PHONE_METADATA_FILE = fileURLToPath(new URL('../lib/domain/phone-metadata.json', import.meta.url));

/** Index of a country's number formats in libphonenumber-js's metadata (version 4: calling code, IDD prefix, pattern, lengths, formats, ...). */
const FORMATS = 4;

/**
 * The phone metadata the customer rules need: libphonenumber-js's `min` build without the number formats,
 * which only formatting (`format()`, `AsYouType`) reads and which are 51 of its 83 KB (countries and
 * non-geographic calling codes alike). Parsing an
 * international number and `isPossible()` read the calling codes, each country's national number pattern,
 * possible lengths, national prefix rules, leading digits and types, all kept as they are, so a number is
 * accepted or refused exactly as with `libphonenumber-js/min` (`test/unit/phone-metadata.test.ts`).
 */
export function phoneValidationMetadata(): Record<string, unknown> {
  type Plans = Record<string, unknown[]>;
  const min = createRequire(import.meta.url)('libphonenumber-js/metadata.min.json') as {
    version: number;
    countries: Plans;
    nonGeographic: Plans;
  };
  if (min.version !== 4)
    throw new Error(`libphonenumber-js metadata version ${min.version}: check which index holds the formats`);
  const withoutFormats = (plans: Plans) =>
    Object.fromEntries(
      Object.entries(plans).map(([code, plan]) => [code, plan.map((field, i) => (i === FORMATS ? 0 : field))]),
    );
  return { ...min, countries: withoutFormats(min.countries), nonGeographic: withoutFormats(min.nonGeographic) };
}

/** One line, like the package's own JSON: `npm run phone-metadata` after upgrading libphonenumber-js. */
export function phoneMetadataText(): string {
  return `${JSON.stringify(phoneValidationMetadata())}\n`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync(PHONE_METADATA_FILE, phoneMetadataText());
  console.log(PHONE_METADATA_FILE);
}
