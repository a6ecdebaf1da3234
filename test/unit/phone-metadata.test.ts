import { parsePhoneNumberFromString } from 'libphonenumber-js/min';
import mobileExamples from 'libphonenumber-js/mobile/examples';
import { describe, expect, it } from 'vitest';
import { phoneValidationMetadata } from '../../infra/write-phone-metadata.js';
import { parsePhoneNumber } from '../../lib/domain/phone-numbers.js';
import phoneMetadata from '../../lib/domain/phone-metadata.json' with { type: 'json' };
import { byProfile } from '../support/profile.js';
import { seededRandom } from '../support/seeded-random.js';

// The generated comparisons: sized for `npm test`; `npm run test:long` runs ten times as many.
const GENERATED = byProfile(20_000, 200_000);
const SAMPLES_PER_START = byProfile(1, 2);

/**
 * `parsePhoneNumber` as it was with the whole `min` build (formats included) in the package's ES5 build: the
 * reference for both what the metadata keeps and the `core/es6` build the service bundles.
 */
function withMinBuild(input: string): string | undefined {
  const text = input.trim();
  if (!/^\+?[\d\s().-]{6,25}$/.test(text)) return undefined;
  const phone = parsePhoneNumberFromString(text.startsWith('+') ? text : `+${text}`);
  return phone?.isPossible() ? phone.number : undefined;
}

describe('phone metadata (lib/domain/phone-metadata.json)', () => {
  it('is the min build without what parsing never reads, as infra/write-phone-metadata.ts derives it from the installed libphonenumber-js', () => {
    // After upgrading libphonenumber-js: `npx tsx infra/write-phone-metadata.ts`.
    expect(phoneMetadata).toEqual(phoneValidationMetadata());
  });

  it('accepts and refuses the numbers the customer tests use exactly as the min build does', () => {
    const used = [
      '15557778888',
      '+15557778888',
      '+44 20 7946 0958',
      '+49 30 1234567',
      '12',
      '+999123456789',
      'call me',
      '+1 555',
      '0',
      'y',
      '555',
      '+1 23',
    ];
    for (const input of used) expect(parsePhoneNumber(input), input).toBe(withMinBuild(input));
    expect(used.map(parsePhoneNumber).filter(Boolean)).toEqual([
      '+15557778888',
      '+15557778888',
      '+442079460958',
      '+49301234567',
    ]);
  });

  it("accepts and refuses each country's example mobile number, shortened and lengthened, as the min build does", () => {
    // A real number of each country, those sharing a calling code included (CA on +1, JE on +44, VA on +39...).
    const countries: Record<string, unknown[]> = phoneMetadata.countries;
    let compared = 0;
    for (const [country, national] of Object.entries(mobileExamples)) {
      const callingCode = countries[country]?.[0] as string | undefined;
      if (!callingCode) continue;
      for (const variant of [national, national.slice(0, -1), `${national}5`, national.slice(0, -3), `0${national}`]) {
        for (const input of [`+${callingCode}${variant}`, `${callingCode} ${variant}`]) {
          expect(parsePhoneNumber(input), `${country} ${input}`).toBe(withMinBuild(input));
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(2_000);
  });

  it('accepts and refuses numbers of every 3-digit start and length where countries share a calling code, as the min build does', () => {
    // Which of the countries sharing a code a number belongs to decides the lengths `isPossible()` allows
    // (+1 310 1234 is Canadian and possible, 7 digits being too short for the US): every start of the
    // national number, at every length one of those countries has.
    const next = seededRandom(6);
    const countries = phoneMetadata.countries as Record<string, unknown[]>;
    let compared = 0;
    for (const [callingCode, sharing] of Object.entries(phoneMetadata.country_calling_codes)) {
      if (sharing.length < 2) continue;
      const lengths = new Set(sharing.flatMap((country) => countries[country]![3] as number[]));
      for (let start = 0; start < 1000; start++) {
        for (const length of lengths) {
          for (let sample = 0; sample < SAMPLES_PER_START; sample++) {
            const rest = Array.from({ length: length - 3 }, () => Math.floor(next() * 10)).join('');
            const input = `+${callingCode}${String(start).padStart(3, '0')}${rest}`;
            const ours = parsePhoneNumber(input);
            if (ours !== withMinBuild(input)) expect(ours, input).toBe(withMinBuild(input));
            compared++;
          }
        }
      }
    }
    expect(parsePhoneNumber('+13101234')).toBe('+13101234');
    expect(compared).toBeGreaterThan(25_000 * SAMPLES_PER_START);
  }, 60_000);

  it(`accepts and refuses ${GENERATED.toLocaleString('en')} generated numbers exactly as the min build does, for every calling code`, () => {
    const next = seededRandom(27);
    const callingCodes = Object.keys(phoneMetadata.country_calling_codes);
    const digits = (count: number) => Array.from({ length: count }, () => Math.floor(next() * 10)).join('');
    let accepted = 0;
    for (let i = 0; i < GENERATED; i++) {
      const code = callingCodes[i % callingCodes.length]!;
      // National numbers of 1 to 17 digits, a third with a leading 0 (a national prefix to strip in many countries).
      const national = (i % 3 === 0 ? '0' : '') + digits(1 + Math.floor(next() * 17));
      const input = i % 2 === 0 ? `+${code}${national}` : `${code} ${national}`;
      const ours = parsePhoneNumber(input);
      if (ours !== withMinBuild(input)) expect(ours, input).toBe(withMinBuild(input));
      if (ours) accepted++;
    }
    // Both outcomes are exercised.
    expect(accepted).toBeGreaterThan(GENERATED / 10);
    expect(accepted).toBeLessThan(GENERATED * 0.9);
  }, 60_000);
});
