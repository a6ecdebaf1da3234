import { createRequire } from 'node:module';
import countries from 'i18n-iso-countries/index.js';
import en from 'i18n-iso-countries/langs/en.json' with { type: 'json' };
import { states } from 'states-us';
import { describe, expect, it } from 'vitest';
import { geographyData } from '../../infra/write-geography-data.js';
import geographyDataFile from '../../lib/domain/geography-data.json' with { type: 'json' };
import { type Country, resolveCountry, resolveUsState, type UsState } from '../../lib/domain/geography.js';
import { byProfile } from '../support/profile.js';
import { seededRandom } from '../support/seeded-random.js';

// Sized for `npm test`; `npm run test:long` types ten times as many.
const VARIANTS = byProfile(2_000, 20_000);

countries.registerLocale(en);

/** `resolveCountry` as it was over the i18n-iso-countries API itself, with its English locale: the reference. */
function countryByLibrary(input: string): Country | undefined {
  const key = input.trim().replace(/\s+/g, ' ').toUpperCase();
  if (key === '') return undefined;
  const fromAlpha2 = (alpha2: string) => {
    const alpha3 = countries.getAlpha2Codes()[alpha2];
    const name = countries.getName(alpha2, 'en', { select: 'official' });
    return alpha3 && name ? { alpha2, alpha3, name } : undefined;
  };
  if (key.length === 2 && Object.hasOwn(countries.getAlpha2Codes(), key)) return fromAlpha2(key);
  if (key.length === 3 && Object.hasOwn(countries.getAlpha3Codes(), key))
    return fromAlpha2(countries.getAlpha3Codes()[key]!);
  const alpha2 = countries.getSimpleAlpha2Code(key, 'en');
  return alpha2 ? fromAlpha2(alpha2) : undefined;
}

/** `resolveUsState` as it was over states-us, Palau left out: the reference. */
function usStateByLibrary(input: string): UsState | undefined {
  const key = (text: string) => text.trim().replace(/\s+/g, ' ').toUpperCase();
  const byKey = new Map<string, UsState>();
  for (const entry of states) {
    if (entry.abbreviation === 'PW') continue;
    const state = { code: entry.abbreviation, name: entry.name };
    byKey.set(key(entry.abbreviation), state);
    byKey.set(key(entry.name), state);
  }
  return byKey.get(key(input));
}

/** The whole table of the `diacritics` i18n-iso-countries folds names with, the file's subset included. */
const diacriticsMap = (
  createRequire(createRequire(import.meta.url).resolve('i18n-iso-countries'))('diacritics') as {
    diacriticsMap: Record<string, string>;
  }
).diacriticsMap;

const englishNames = Object.values(en.countries).flatMap((names) => (Array.isArray(names) ? names : [names]));

describe('country and state tables (lib/domain/geography-data.json)', () => {
  it('are what infra/write-geography-data.ts derives from the installed i18n-iso-countries, diacritics and states-us', () => {
    // After upgrading one of them: `npx tsx infra/write-geography-data.ts`.
    expect(geographyDataFile).toEqual(geographyData());
  });

  it('find every code and English name, in any case and spacing, as the library does', () => {
    const inputs = [
      ...Object.entries(countries.getAlpha2Codes()).flatMap((codes) => [...codes, codes[0].toLowerCase()]),
      ...Object.keys(countries.getNumericCodes()),
      ...englishNames.flatMap((name) => [
        name,
        name.toLowerCase(),
        name.toUpperCase(),
        `  ${name.replace(/ /g, '   ')} `,
      ]),
      ...['', ' ', 'UK', 'uk', 'u.s.', 'Cote dIvoire', 'Turkiye', 'TÜRKIYE', 'Aland', 'Congo', 'congo ', 'XX', 'ZZZ'],
      ...['Atlantis', '840', 'United  States', 'Korea', "people's republic of china", 'CÔTE D’IVOIRE', 'ＵＳＡ'],
    ];
    for (const input of inputs) expect(resolveCountry(input), JSON.stringify(input)).toEqual(countryByLibrary(input));
    expect(resolveCountry("cote d'ivoire")?.alpha2).toBe('CI');
    expect(resolveCountry('Congo')?.alpha2).toBe('CG');
  });

  it(`find or refuse names typed with letters of the diacritics table as the library does (${VARIANTS.toLocaleString('en')} variants)`, () => {
    const next = seededRandom(27);
    const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
    const letters = Object.keys(diacriticsMap);
    const lettersByPlain = new Map<string, string[]>();
    for (const letter of letters) {
      const plain = diacriticsMap[letter]!.toLowerCase();
      lettersByPlain.set(plain, [...(lettersByPlain.get(plain) ?? []), letter]);
    }
    let found = 0;
    for (let i = 0; i < VARIANTS; i++) {
      const name = pick(englishNames);
      const at = Math.floor(next() * name.length);
      // Half the time a letter the table reads as the one it replaces (most of these still match), half any letter.
      const letter = (i % 2 === 0 && lettersByPlain.get(name[at]!.toLowerCase())) || letters;
      const input = name.slice(0, at) + pick(letter) + name.slice(at + 1);
      const ours = resolveCountry(input);
      if (JSON.stringify(ours) !== JSON.stringify(countryByLibrary(input)))
        expect(ours, JSON.stringify(input)).toEqual(countryByLibrary(input));
      if (ours) found++;
    }
    // Both outcomes are exercised.
    expect(found).toBeGreaterThan(VARIANTS / 10);
    expect(found).toBeLessThan(VARIANTS * 0.9);
  }, 60_000);

  it('find every US state, DC and territory by code or name as states-us does, and refuse Palau', () => {
    const inputs = [
      ...states.flatMap((state) => [
        state.abbreviation,
        state.name,
        state.name.toLowerCase(),
        ` ${state.abbreviation.toLowerCase()}`,
      ]),
      ...['PW', 'Palau', 'AA', 'AE', 'AP', '', 'Calif.', 'New  York', 'district of columbia', 'Puerto Rico', 'XX'],
    ];
    for (const input of inputs) expect(resolveUsState(input), JSON.stringify(input)).toEqual(usStateByLibrary(input));
  });
});
