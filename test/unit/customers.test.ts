import { describe, it, expect } from 'vitest';
import {
  ageInYearsOn,
  isPoBoxAddress,
  parseCustomer,
  validateCustomer,
  validateMinor,
  type NormalizedCustomer,
  type NormalizedMinor,
} from '../../lib/domain/customers.js';
import { isValidEmail } from '../../lib/domain/email.js';
import { isSanctionedCountry, resolveCountry, resolveUsState } from '../../lib/domain/geography.js';
import { ValidationError } from '../../lib/domain/errors.js';
import { formatIssues } from '../../lib/domain/validation.js';
import { customerRequest } from '../../lib/http/schemas/customer-request.js';
import { minorRequest } from '../../lib/http/schemas/minor-request.js';

// 2026-06-15 12:00 UTC: every test pins the request time so ages and "future" never drift.
const NOW_MS = Date.UTC(2026, 5, 15, 12, 0, 0);
const HOUR_MS = 3_600_000;

function adultBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    first_name: 'Ada',
    last_name: 'Lovelace',
    email: 'Ada.Lovelace@Example.com',
    address_one: '12 Main Street',
    city: 'Springfield',
    state: 'IL',
    zip: '62701',
    country: 'United States',
    date_of_birth: '1980-01-31',
    id_number_type: 'non_in_passport',
    id_number: 'X1234567',
    signed_timestamp: NOW_MS - HOUR_MS,
    ...overrides,
  };
}

function minorBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const { signed_timestamp: _unused, ...rest } = adultBody();
  return {
    ...rest,
    first_name: 'Byron',
    email: 'byron@example.com',
    date_of_birth: '2015-03-10',
    utma_signed_timestamp: NOW_MS - HOUR_MS,
    custodian_participant_code: 'AB12CD',
    custodian_relationship: 'parent',
    ...overrides,
  };
}

function valueOf<T>(result: { ok: true; value: T } | { ok: false; errors: string[] }): T {
  if (!result.ok) throw new Error(`expected a valid body, got: ${result.errors.join(' | ')}`);
  return result.value;
}

function errorsOf(result: { ok: true } | { ok: false; errors: string[] }): string[] {
  if (result.ok) throw new Error('expected validation errors, got a valid result');
  return result.errors;
}

const customerErrors = (overrides: Record<string, unknown>) => errorsOf(validateCustomer(adultBody(overrides), NOW_MS));
const customerValue = (overrides: Record<string, unknown>) => valueOf(validateCustomer(adultBody(overrides), NOW_MS));
const minorErrors = (overrides: Record<string, unknown>) => errorsOf(validateMinor(minorBody(overrides), NOW_MS));
const minorValue = (overrides: Record<string, unknown>) => valueOf(validateMinor(minorBody(overrides), NOW_MS));

describe('geography', () => {
  it('resolves a country by English short name, official name, alpha-2 and alpha-3, case-insensitively', () => {
    const us = { alpha2: 'US', alpha3: 'USA', name: 'United States of America' };
    for (const input of ['United States', 'united states', 'United States of America', 'US', 'us', 'USA', ' usa ']) {
      expect(resolveCountry(input), input).toEqual(us);
    }
    expect(resolveCountry('Germany')?.alpha2).toBe('DE');
    expect(resolveCountry('DEU')?.alpha2).toBe('DE');
    expect(resolveCountry('gb')?.alpha3).toBe('GBR');
    expect(resolveCountry('United Kingdom')?.alpha2).toBe('GB');
    expect(resolveCountry("Cote d'Ivoire")?.alpha2).toBe('CI');
    expect(resolveCountry('Turkiye')?.alpha2).toBe('TR');
  });

  it('does not resolve unknown names, numeric codes or blanks', () => {
    for (const input of ['Atlantis', 'XX', 'ZZZ', '840', '', '   ', 'United  Statez']) {
      expect(resolveCountry(input), input).toBeUndefined();
    }
  });

  it('flags the comprehensively sanctioned jurisdictions only', () => {
    for (const code of ['CU', 'IR', 'KP', 'SY', 'ir']) expect(isSanctionedCountry(code), code).toBe(true);
    for (const code of ['US', 'RU', 'VE', 'UA', 'KR']) expect(isSanctionedCountry(code), code).toBe(false);
  });

  it('resolves US states and DC by name or USPS code, case-insensitively', () => {
    expect(resolveUsState('California')).toEqual({ code: 'CA', name: 'California' });
    expect(resolveUsState('ca')?.code).toBe('CA');
    expect(resolveUsState('new  york')?.code).toBe('NY');
    expect(resolveUsState('DC')?.code).toBe('DC');
    expect(resolveUsState('District of Columbia')?.code).toBe('DC');
    expect(resolveUsState('Puerto Rico')?.code).toBe('PR');
    expect(resolveUsState('GU')?.code).toBe('GU');
  });

  it('rejects unknown states, Palau and military codes', () => {
    for (const input of ['Ontario', 'XX', 'PW', 'Palau', 'AE', ''])
      expect(resolveUsState(input), input).toBeUndefined();
  });
});

describe('isPoBoxAddress', () => {
  it.each([
    'PO Box 123',
    'P.O. Box 123',
    'p.o.box 123',
    'P O Box 123',
    'PO. Box 7',
    'PO-Box 7',
    'POBox 123',
    'pobox123',
    'POB 123',
    'P.O.B. 123',
    'Post Office Box 55',
    'Post Box No. 12',
    'Postal Box 9',
    'GPO Box 1234',
    'Box 123',
    'Box #12',
    '12 Main St, PO Box 4',
    'PO Box',
  ])('rejects %s', (line) => {
    expect(isPoBoxAddress(line)).toBe(true);
  });

  it.each([
    '123 Boxwood Lane',
    'Pobox Street 4',
    '1 Box Hill Road',
    'Box Hill Road 5',
    '77 Tempo Boxing Club Rd',
    'RR 2 Box 15',
    'HC 1 Box 5',
    'PMB 123, 500 Market St',
    '1 Post Office Square',
    'Apollo Boxer Ave 3',
  ])('accepts %s', (line) => {
    expect(isPoBoxAddress(line)).toBe(false);
  });
});

describe('isValidEmail', () => {
  it.each(['a@b.co', 'first.last+tag@sub.example.org', "o'brien@example.ie", 'UPPER@EXAMPLE.COM'])(
    'accepts %s',
    (email) => {
      expect(isValidEmail(email)).toBe(true);
    },
  );

  it.each([
    'plainaddress',
    'a@b',
    'a b@example.com',
    'a@exa mple.com',
    'a..b@example.com',
    '.a@example.com',
    'a.@example.com',
    'a@example..com',
    'a@@example.com',
    'a@example.c',
    '@example.com',
    `${'x'.repeat(65)}@example.com`,
    `a@${'d'.repeat(250)}.com`,
  ])('rejects %s', (email) => {
    expect(isValidEmail(email)).toBe(false);
  });
});

describe('ageInYearsOn', () => {
  it('counts a birthday falling on the request day', () => {
    expect(ageInYearsOn('2008-06-15', NOW_MS)).toBe(18);
    expect(ageInYearsOn('2008-06-16', NOW_MS)).toBe(17);
  });

  it('uses the UTC calendar day of the request', () => {
    expect(ageInYearsOn('2008-06-16', Date.UTC(2026, 5, 15, 23, 59, 59, 999))).toBe(17);
    expect(ageInYearsOn('2008-06-16', Date.UTC(2026, 5, 16, 0, 0, 0))).toBe(18);
  });

  it('ages a 29 February birthday on 1 March in common years and on 29 February in leap years', () => {
    expect(ageInYearsOn('2008-02-29', Date.UTC(2026, 1, 28))).toBe(17);
    expect(ageInYearsOn('2008-02-29', Date.UTC(2026, 2, 1))).toBe(18);
    expect(ageInYearsOn('2008-02-29', Date.UTC(2028, 1, 28))).toBe(19);
    expect(ageInYearsOn('2008-02-29', Date.UTC(2028, 1, 29))).toBe(20);
  });
});

describe('validateCustomer (adult / custodian)', () => {
  it('accepts a complete US body and normalises it', () => {
    const value: NormalizedCustomer = customerValue({});
    expect(value).toEqual({
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: 'Ada.Lovelace@Example.com',
      address_one: '12 Main Street',
      city: 'Springfield',
      state: 'IL',
      zip: '62701',
      country: 'United States',
      date_of_birth: '1980-01-31',
      id_number_type: 'non_in_passport',
      id_number: 'X1234567',
      signed_timestamp: NOW_MS - HOUR_MS,
      email_normalized: 'ada.lovelace@example.com',
      country_alpha2: 'US',
      state_code: 'IL',
    });
  });

  it('trims values, strips unknown fields and keeps optional ones that were given', () => {
    const value = customerValue({
      first_name: '  Ada ',
      address_two: ' Apt 4 ',
      id_issuing_authority: 'IN',
      metadata: { crm_id: 42, tags: ['vip'] },
      is_admin: true,
      participant_code: 'HACKED',
    });
    expect(value.first_name).toBe('Ada');
    expect(value.address_two).toBe('Apt 4');
    expect(value.id_issuing_authority).toBe('IN');
    expect(value.metadata).toEqual({ crm_id: 42, tags: ['vip'] });
    expect(value).not.toHaveProperty('is_admin');
    expect(value).not.toHaveProperty('participant_code');
  });

  it('treats blank or null optional fields as absent', () => {
    const value = customerValue({ address_two: '  ', id_issuing_authority: null, metadata: null });
    expect(value).not.toHaveProperty('address_two');
    expect(value).not.toHaveProperty('id_issuing_authority');
    expect(value).not.toHaveProperty('metadata');
  });

  it('rejects a body that is not a JSON object', () => {
    for (const body of [null, 'text', 42, [adultBody()]]) {
      expect(errorsOf(validateCustomer(body, NOW_MS))).toEqual(['body: must be a JSON object']);
    }
  });

  it('reports every missing required field at once, in spec order', () => {
    expect(errorsOf(validateCustomer({}, NOW_MS))).toEqual([
      'first_name: is required',
      'last_name: is required',
      'email: is required',
      'address_one: is required',
      'city: is required',
      'country: is required',
      'date_of_birth: is required',
      'id_number_type: is required',
      'id_number: is required',
      'signed_timestamp: is required',
    ]);
  });

  it('reports at least three errors for a body with three problems', () => {
    const errors = customerErrors({ email: 'not-an-email', zip: '1234', date_of_birth: '2023-02-29' });
    expect(errors.length).toBeGreaterThanOrEqual(3);
    expect(errors).toEqual([
      'email: must be a valid e-mail address',
      'zip: must be NNNNN or NNNNN-NNNN for a US address',
      'date_of_birth: must be a real calendar date in the form YYYY-MM-DD',
    ]);
  });

  it('rejects blank and non-string required fields', () => {
    expect(customerErrors({ first_name: '   ' })).toEqual(['first_name: must not be empty']);
    expect(customerErrors({ last_name: 7 })).toEqual(['last_name: must be a string']);
    expect(customerErrors({ city: 'x'.repeat(201) })).toEqual(['city: must be at most 200 characters']);
  });

  it('checks the e-mail format', () => {
    expect(customerErrors({ email: 'a..b@example.com' })).toEqual(['email: must be a valid e-mail address']);
    expect(customerErrors({ email: 'ada @example.com' })).toEqual(['email: must be a valid e-mail address']);
    expect(customerValue({ email: '  Ada+Test@EXAMPLE.org ' })).toMatchObject({
      email: 'Ada+Test@EXAMPLE.org',
      email_normalized: 'ada+test@example.org',
    });
  });

  it('rejects PO boxes in either address line', () => {
    expect(customerErrors({ address_one: 'P.O. Box 123' })).toEqual([
      'address_one: PO Box addresses are not accepted; give a street address',
    ]);
    expect(customerErrors({ address_two: 'POB 9' })).toEqual([
      'address_two: PO Box addresses are not accepted; give a street address',
    ]);
    expect(customerValue({ address_one: '123 Boxwood Lane' }).address_one).toBe('123 Boxwood Lane');
  });

  describe('country', () => {
    it('accepts the English name, alpha-2 and alpha-3 and echoes what was sent', () => {
      for (const country of ['United States', 'US', 'USA', 'united states of america']) {
        const value = customerValue({ country });
        expect(value.country).toBe(country);
        expect(value.country_alpha2).toBe('US');
      }
    });

    it('rejects an unknown country', () => {
      expect(customerErrors({ country: 'Atlantis' })).toEqual([
        'country: must be a supported country (English name, ISO alpha-2 or alpha-3 code)',
      ]);
    });

    it('rejects sanctioned jurisdictions however they are written', () => {
      for (const country of ['Cuba', 'IR', 'PRK', 'North Korea', 'SYR', 'Syrian Arab Republic', 'iran']) {
        const errors = customerErrors({ country, state: undefined, zip: undefined });
        expect(errors, country).toHaveLength(1);
        expect(errors[0], country).toMatch(
          /^country: customers in .+ cannot be onboarded \(sanctioned jurisdiction\)$/,
        );
      }
    });
  });

  describe('state and zip', () => {
    it('require a state and zip for a US address', () => {
      expect(customerErrors({ state: undefined, zip: undefined })).toEqual([
        'state: is required when country is the United States',
        'zip: is required when country is the United States',
      ]);
      expect(customerErrors({ state: '', zip: ' ' })).toEqual(['state: must not be empty', 'zip: must not be empty']);
    });

    it('accept US state names and USPS codes, including DC', () => {
      expect(customerValue({ state: 'Illinois' })).toMatchObject({ state: 'Illinois', state_code: 'IL' });
      expect(customerValue({ state: 'ny' })).toMatchObject({ state: 'ny', state_code: 'NY' });
      expect(customerValue({ state: 'District of Columbia' }).state_code).toBe('DC');
      expect(customerValue({ state: 'PR' }).state_code).toBe('PR');
    });

    it('reject an unknown US state', () => {
      expect(customerErrors({ state: 'Ontario' })).toEqual([
        'state: must be a US state, DC or inhabited territory (name or USPS code)',
      ]);
      expect(customerErrors({ state: 'PW' })).toHaveLength(1);
    });

    it('accept NNNNN and NNNNN-NNNN zips and reject other shapes', () => {
      expect(customerValue({ zip: '62701' }).zip).toBe('62701');
      expect(customerValue({ zip: '62701-1234' }).zip).toBe('62701-1234');
      expect(customerValue({ zip: ' 62701 ' }).zip).toBe('62701');
      for (const zip of ['6270', '627011', '62701-12', '62701 1234', 'ABCDE', '62701-']) {
        expect(customerErrors({ zip }), zip).toEqual(['zip: must be NNNNN or NNNNN-NNNN for a US address']);
      }
    });

    it('are optional free text outside the US', () => {
      const bare = customerValue({ country: 'India', state: undefined, zip: undefined });
      expect(bare.country_alpha2).toBe('IN');
      expect(bare).not.toHaveProperty('state');
      expect(bare).not.toHaveProperty('zip');
      expect(bare).not.toHaveProperty('state_code');

      const given = customerValue({ country: 'GBR', state: 'Greater London', zip: 'SW1A 1AA' });
      expect(given).toMatchObject({ state: 'Greater London', zip: 'SW1A 1AA', country_alpha2: 'GB' });
      expect(given).not.toHaveProperty('state_code');
    });

    it('are not checked against US rules when the country itself is unknown', () => {
      expect(customerErrors({ country: 'Atlantis', state: 'Nowhere', zip: '1' })).toEqual([
        'country: must be a supported country (English name, ISO alpha-2 or alpha-3 code)',
      ]);
    });
  });

  describe('date_of_birth', () => {
    it('must be YYYY-MM-DD and a real calendar date', () => {
      const problem = ['date_of_birth: must be a real calendar date in the form YYYY-MM-DD'];
      for (const date_of_birth of [
        '1980-1-31',
        '31/01/1980',
        '1980-13-01',
        '1980-04-31',
        '2023-02-29',
        '1900-02-29',
        '19800131',
      ]) {
        expect(customerErrors({ date_of_birth }), date_of_birth).toEqual(problem);
      }
      expect(customerValue({ date_of_birth: '2000-02-29' }).date_of_birth).toBe('2000-02-29');
    });

    it('must not be in the future', () => {
      expect(customerErrors({ date_of_birth: '2026-06-16' })).toEqual(['date_of_birth: must not be in the future']);
      expect(minorErrors({ date_of_birth: '2026-06-16' })).toEqual(['date_of_birth: must not be in the future']);
      expect(minorValue({ date_of_birth: '2026-06-15' }).date_of_birth).toBe('2026-06-15');
    });

    it('must not be implausibly old', () => {
      expect(customerErrors({ date_of_birth: '0980-01-31' })).toEqual(['date_of_birth: must not be before 1900-01-01']);
      expect(customerValue({ date_of_birth: '1900-01-01' }).date_of_birth).toBe('1900-01-01');
    });

    it('makes a customer exactly 18 today an adult and one a day short a minor', () => {
      expect(customerValue({ date_of_birth: '2008-06-15' }).date_of_birth).toBe('2008-06-15');
      expect(customerErrors({ date_of_birth: '2008-06-16' })).toEqual([
        'date_of_birth: customer must be at least 18 years old',
      ]);
    });

    it('treats a leap-day birthday as reached on 1 March in a common year', () => {
      const body = adultBody({ date_of_birth: '2008-02-29', signed_timestamp: Date.UTC(2026, 0, 1) });
      expect(errorsOf(validateCustomer(body, Date.UTC(2026, 1, 28, 12)))).toEqual([
        'date_of_birth: customer must be at least 18 years old',
      ]);
      expect(valueOf(validateCustomer(body, Date.UTC(2026, 2, 1, 12))).date_of_birth).toBe('2008-02-29');
    });
  });

  describe('ID fields', () => {
    it('accept each ID type from the spec', () => {
      for (const id_number_type of [
        'aadhar_card',
        'in_driving_license',
        'in_passport',
        'in_passport_card',
        'non_in_passport',
      ]) {
        expect(customerValue({ id_number_type }).id_number_type).toBe(id_number_type);
      }
    });

    it('reject an ID type in neither the spec list nor the reference API list (a minor takes the spec list only)', () => {
      expect(customerErrors({ id_number_type: 'library_card' })).toEqual([
        'id_number_type: must be one of aadhar_card, in_driving_license, in_passport, in_passport_card, non_in_passport, non_in_other, ' +
          'us_drivers_license, us_passport, us_passport_card, us_permanent_resident_card, us_border_crossing_card, us_alien_card, ' +
          'us_id_card, non_us_passport, non_us_other, passport, eu_drivers_license, national_id, ssn',
      ]);
      expect(minorErrors({ id_number_type: 'us_passport' })).toEqual([
        'id_number_type: must be one of aadhar_card, in_driving_license, in_passport, in_passport_card, non_in_passport, non_in_other',
      ]);
    });

    it('require non_us_other_type exactly when the type is non_in_other', () => {
      expect(customerErrors({ id_number_type: 'non_in_other' })).toEqual([
        'non_us_other_type: is required when id_number_type is non_in_other',
      ]);
      expect(customerValue({ id_number_type: 'non_in_other', non_us_other_type: 'Voter ID' })).toMatchObject({
        id_number_type: 'non_in_other',
        non_us_other_type: 'Voter ID',
      });
      expect(customerErrors({ id_number_type: 'in_passport', non_us_other_type: 'Voter ID' })).toEqual([
        'non_us_other_type: is only allowed when id_number_type is non_in_other or non_us_other',
      ]);
      expect(minorErrors({ id_number_type: 'in_passport', non_us_other_type: 'Voter ID' })).toEqual([
        'non_us_other_type: is only allowed when id_number_type is non_in_other',
      ]);
    });

    it('require an id_number', () => {
      expect(customerErrors({ id_number: '' })).toEqual(['id_number: must not be empty']);
    });
  });

  describe('signed_timestamp', () => {
    it('accepts an integer millisecond time up to now', () => {
      expect(customerValue({ signed_timestamp: NOW_MS }).signed_timestamp).toBe(NOW_MS);
    });

    it('rejects fractional, string and seconds values', () => {
      const notMs = ['signed_timestamp: must be an integer UNIX time in milliseconds'];
      expect(customerErrors({ signed_timestamp: 1.5e12 + 0.5 })).toEqual(notMs);
      expect(customerErrors({ signed_timestamp: String(NOW_MS) })).toEqual(notMs);
      expect(customerErrors({ signed_timestamp: -1 })).toEqual(notMs);
      expect(customerErrors({ signed_timestamp: Math.floor(NOW_MS / 1000) })).toEqual([
        'signed_timestamp: must be in milliseconds (this value looks like seconds)',
      ]);
    });
  });

  it('requires metadata to be a plain JSON object when given', () => {
    for (const metadata of [[1, 2], 'x', 5, true]) {
      expect(customerErrors({ metadata }), String(metadata)).toEqual(['metadata: must be a JSON object']);
    }
    expect(customerErrors({ metadata: { blob: 'x'.repeat(20_000) } })).toEqual([
      'metadata: must be at most 16384 characters as JSON',
    ]);
  });

  it('parseCustomer throws a ValidationError carrying every problem', () => {
    expect(parseCustomer(adultBody(), NOW_MS).country_alpha2).toBe('US');
    try {
      parseCustomer(adultBody({ email: 'x', city: '' }), NOW_MS);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).errors).toEqual([
        'email: must be a valid e-mail address',
        'city: must not be empty',
      ]);
    }
  });
});

describe('validateCustomer: the reference API US vocabulary', () => {
  /** A US customer as reference clients send it: jurisdiction_code instead of state/country. */
  const referenceBody = (overrides: Record<string, unknown> = {}) => {
    const { state: _s, country: _c, zip: _z, id_number_type: _t, id_number: _n, ...rest } = adultBody();
    return {
      ...rest,
      middle_name: 'King',
      jurisdiction_code: 'US-CA',
      postal_code: '94105',
      citizenship_code: 'US',
      tax_id: '123-45-6789',
      phone_number: '15557778888',
      id_number_type: 'us_drivers_license',
      id_number: 'D1234567',
      kyc: 'pass',
      kyc_timestamp: NOW_MS - HOUR_MS,
      sanction_screening: 'pass',
      sanction_screening_timestamp: NOW_MS - HOUR_MS,
      ...overrides,
    };
  };
  const referenceValue = (overrides: Record<string, unknown> = {}) =>
    valueOf(validateCustomer(referenceBody(overrides), NOW_MS));
  const referenceErrors = (overrides: Record<string, unknown> = {}) =>
    errorsOf(validateCustomer(referenceBody(overrides), NOW_MS));

  it('takes jurisdiction_code in place of state and country, and postal_code in place of zip', () => {
    expect(referenceValue()).toMatchObject({
      jurisdiction_code: 'US-CA',
      country: 'United States of America',
      country_alpha2: 'US',
      state_code: 'CA',
      postal_code: '94105',
      citizenship_code: 'US',
      middle_name: 'King',
      phone_number: '15557778888',
      phone_e164: '+15557778888',
      tax_id: '123456789',
      tax_id_last4: '6789',
      kyc: 'pass',
      kyc_timestamp: NOW_MS - HOUR_MS,
      sanction_screening: 'pass',
      id_number_type: 'us_drivers_license',
    });
    expect(referenceValue({ jurisdiction_code: 'us-pr' }).jurisdiction_code).toBe('US-PR');
  });

  it('accepts jurisdiction_code agreeing with state and country, and refuses a disagreement naming both fields', () => {
    expect(referenceValue({ state: 'California', country: 'USA' }).state_code).toBe('CA');
    expect(referenceErrors({ state: 'NY' })).toEqual([
      'jurisdiction_code: US-CA disagrees with state (NY); give one, or both agreeing',
    ]);
    expect(
      referenceErrors({ country: 'Germany', citizenship_code: 'DE', tax_id: undefined, id_number_type: 'passport' }),
    ).toEqual(['jurisdiction_code: US-CA disagrees with country (Germany); give one, or both agreeing']);
  });

  it("refuses unknown jurisdiction codes, including other countries' subdivisions the reference does not list", () => {
    for (const jurisdiction_code of ['US-XX', 'US-California', 'CA', 'DE-BY', 'USCA']) {
      expect(referenceErrors({ jurisdiction_code }), jurisdiction_code).toEqual([
        'jurisdiction_code: must be the ISO 3166-2 code of a US state, DC or inhabited territory (e.g. US-CA)',
      ]);
    }
  });

  it('takes country as a name, alpha-2 or alpha-3 beside jurisdiction_code', () => {
    for (const country of ['United States', 'US', 'USA']) expect(referenceValue({ country }).country).toBe(country);
  });

  it('checks tax ids: an SSN/ITIN for US persons, a foreign TIN otherwise; never repeating the value', () => {
    expect(referenceValue({ tax_id: '912345678' }).tax_id).toBe('912345678');
    for (const tax_id of ['12345678', '123-45-678X', '000-12-3456', '666-12-3456', '123-00-4567', '123-45-0000']) {
      const errors = referenceErrors({ tax_id });
      expect(errors, tax_id).toHaveLength(1);
      expect(errors[0]).toMatch(/^tax_id: /);
      expect(errors[0]).not.toContain(tax_id.replace(/-/g, '').slice(-4));
    }
    const german = {
      jurisdiction_code: undefined,
      postal_code: '10115',
      country: 'DE',
      citizenship_code: 'DE',
      id_number_type: 'passport',
    };
    expect(referenceValue({ ...german, tax_id: 'DE 12345 67890' }).tax_id).toBe('DE1234567890');
    expect(referenceErrors({ ...german, tax_id: '12' })).toEqual(['tax_id: must have 4 to 20 letters and digits']);
    expect(referenceErrors({ tax_id: undefined })).toEqual(['tax_id: is required when citizenship_code is US']);
  });

  it('takes an ssn ID whose number is the tax id, in either field, kept only as its last four', () => {
    const value = referenceValue({ id_number_type: 'ssn', id_number: undefined });
    expect(value).toMatchObject({
      id_number_type: 'ssn',
      id_number: '*****6789',
      tax_id: '123456789',
      tax_id_last4: '6789',
    });
    expect(referenceValue({ id_number_type: 'ssn', id_number: '123456789', tax_id: undefined }).tax_id).toBe(
      '123456789',
    );
    expect(referenceErrors({ id_number_type: 'ssn', id_number: '987-65-4321' })).toEqual([
      'tax_id: differs from id_number; for an ssn they are the same number',
    ]);
    expect(
      referenceErrors({ id_number_type: 'ssn', id_number: undefined, tax_id: undefined, citizenship_code: undefined }),
    ).toEqual(['tax_id: is required when id_number_type is ssn (or give the SSN as id_number)']);
  });

  it('checks phone numbers as E.164 with a country calling code', () => {
    expect(referenceValue({ phone_number: '+44 20 7946 0958' }).phone_e164).toBe('+442079460958');
    for (const phone_number of ['12', '+999123456789', 'call me', '+1 555']) {
      expect(referenceErrors({ phone_number }), phone_number).toEqual([
        'phone_number: must be a phone number with its country code (E.164, e.g. +15557778888)',
      ]);
    }
  });

  it('accepts every reference ID type for a customer its country and citizenship allow', () => {
    const cases: [string, Record<string, unknown>][] = [
      ['us_drivers_license', {}],
      ['us_passport', {}],
      ['us_passport_card', {}],
      ['us_id_card', {}],
      ['ssn', { id_number: undefined }],
      ['us_permanent_resident_card', { citizenship_code: 'MX', tax_id: '912345678' }],
      ['us_alien_card', { citizenship_code: 'MX', tax_id: undefined }],
      ['us_border_crossing_card', { citizenship_code: 'MX', tax_id: undefined }],
      ['non_us_passport', { citizenship_code: 'GB', tax_id: undefined }],
      ['non_us_other', { citizenship_code: 'GB', tax_id: undefined, non_us_other_type: 'Voter card' }],
      ['passport', {}],
      ['national_id', {}],
      [
        'eu_drivers_license',
        {
          jurisdiction_code: undefined,
          country: 'France',
          postal_code: '75001',
          citizenship_code: 'FR',
          tax_id: undefined,
        },
      ],
    ];
    for (const [id_number_type, overrides] of cases) {
      expect(referenceValue({ id_number_type, ...overrides }).id_number_type, id_number_type).toBe(id_number_type);
    }
  });

  it("refuses an ID type the customer's country or citizenship cannot use", () => {
    const french = {
      jurisdiction_code: undefined,
      country: 'France',
      postal_code: '75001',
      citizenship_code: 'FR',
      tax_id: undefined,
    };
    expect(referenceErrors({ ...french, id_number_type: 'us_drivers_license' })).toEqual([
      'id_number_type: us_drivers_license is issued to US residents; country is FR',
    ]);
    expect(referenceErrors({ id_number_type: 'eu_drivers_license' })).toEqual([
      'id_number_type: eu_drivers_license is issued to residents of the EU/EEA; country is US',
    ]);
    expect(referenceErrors({ id_number_type: 'non_us_passport' })).toEqual([
      'id_number_type: non_us_passport is for customers who are not US citizens; citizenship_code is US',
    ]);
    expect(referenceErrors({ id_number_type: 'us_passport', citizenship_code: 'GB', tax_id: undefined })).toEqual([
      'id_number_type: us_passport is issued to US citizens; citizenship_code is GB',
    ]);
    expect(referenceErrors({ id_number_type: 'us_permanent_resident_card' })).toEqual([
      'id_number_type: us_permanent_resident_card is not issued to US citizens',
    ]);
    expect(referenceErrors({ id_number_type: 'non_us_other', citizenship_code: 'GB', tax_id: undefined })).toEqual([
      'non_us_other_type: is required when id_number_type is non_us_other',
    ]);
  });

  it('requires kyc and sanction_screening with their timestamps, refuses a failed check and a stale time', () => {
    expect(referenceErrors({ kyc: 'fail' })).toEqual(['kyc: a customer who failed KYC cannot be onboarded']);
    expect(referenceErrors({ kyc: 'maybe' })).toEqual(['kyc: must be one of pass, fail']);
    expect(referenceErrors({ kyc_timestamp: undefined })).toEqual(['kyc_timestamp: is required with kyc']);
    expect(referenceErrors({ sanction_screening: undefined })).toEqual([
      'sanction_screening: is required with sanction_screening_timestamp',
    ]);
    expect(referenceErrors({ sanction_screening_timestamp: NOW_MS - 400 * 24 * HOUR_MS })).toEqual([
      'sanction_screening_timestamp: must be within the last year (and at most a day ahead of server time)',
    ]);
    expect(referenceErrors({ kyc_timestamp: 1_700_000_000 })).toEqual([
      'kyc_timestamp: must be an integer UNIX time in milliseconds',
    ]);
  });

  it('reports every new-field problem at once, after the pure rules of the spec fields', () => {
    expect(
      referenceErrors({
        first_name: '',
        jurisdiction_code: 'US-ZZ',
        tax_id: '1',
        phone_number: '0',
        kyc: 'fail',
        id_number_type: 'ssn',
      }),
    ).toEqual([
      'first_name: must not be empty',
      'jurisdiction_code: must be the ISO 3166-2 code of a US state, DC or inhabited territory (e.g. US-CA)',
      'phone_number: must be a phone number with its country code (E.164, e.g. +15557778888)',
      'tax_id: must be a 9-digit SSN or ITIN (NNNNNNNNN or NNN-NN-NNNN)',
      'id_number: for an ssn must be a 9-digit SSN or ITIN (NNNNNNNNN or NNN-NN-NNNN)',
      'kyc: a customer who failed KYC cannot be onboarded',
    ]);
  });

  it('leaves the minor endpoint on the spec rules: the reference vocabulary is not read there', () => {
    const value = minorValue({
      jurisdiction_code: 'US-ZZ',
      tax_id: 'x',
      phone_number: 'y',
      kyc: 'fail',
    }) as unknown as Record<string, unknown>;
    for (const field of ['jurisdiction_code', 'tax_id', 'phone_number', 'kyc']) expect(value[field]).toBeUndefined();
  });
});

describe('validateCustomer: the reference API identity document and agreement time rules', () => {
  const DAY_MS = 24 * HOUR_MS;
  const OUTSIDE_WINDOW = 'signed_timestamp: must be within the last year (and at most a day ahead of server time)';
  /**
   * The reference's US-citizen ("USrel") body: its required fields only, with its values (`citizenship_code`
   * US, `phone_number` 15557778888, `jurisdiction_code`, `zip`), no identity document. The W-form fields are
   * the reference's, not kept here.
   */
  const usRelBody = (overrides: Record<string, unknown> = {}) => ({
    first_name: 'Jane',
    last_name: 'Public',
    email: 'jane.public@example.com',
    phone_number: '15557778888',
    date_of_birth: '1985-09-02',
    address_one: '1 Market St',
    city: 'San Francisco',
    zip: '94105',
    jurisdiction_code: 'US-CA',
    citizenship_code: 'US',
    tax_id: '123-45-6789',
    signed_timestamp: NOW_MS - HOUR_MS,
    kyc: 'pass',
    kyc_timestamp: NOW_MS - HOUR_MS,
    sanction_screening: 'pass',
    sanction_screening_timestamp: NOW_MS - HOUR_MS,
    is_w_form_certified: true,
    w_form_certification: NOW_MS - HOUR_MS,
    signature: 'Jane Public',
    signature_timestamp: NOW_MS - HOUR_MS,
    payee_exemption: 'NONE',
    fatca_reporting_exemption: 'NONE',
    is_not_subject_backup_withholding: true,
    ...overrides,
  });
  const usRelValue = (overrides: Record<string, unknown> = {}) =>
    valueOf(validateCustomer(usRelBody(overrides), NOW_MS));
  const usRelErrors = (overrides: Record<string, unknown> = {}) =>
    errorsOf(validateCustomer(usRelBody(overrides), NOW_MS));

  it('an adult US citizen with an SSN as tax_id needs no identity document', () => {
    const value = usRelValue();
    expect(value).toMatchObject({
      citizenship_code: 'US',
      tax_id: '123456789',
      jurisdiction_code: 'US-CA',
      zip: '94105',
    });
    expect(value).not.toHaveProperty('id_number_type');
    expect(value).not.toHaveProperty('id_number');
    // The US track's optional id_number_type, given alone (the track has no id_number).
    expect(usRelValue({ id_number_type: 'us_passport' })).toMatchObject({ id_number_type: 'us_passport' });
    expect(usRelValue({ id_number_type: 'us_passport' })).not.toHaveProperty('id_number');
    expect(usRelValue({ id_number_type: 'us_drivers_license', id_number: 'D7654321' }).id_number).toBe('D7654321');
  });

  it('an ITIN as tax_id still needs id_number_type and id_number', () => {
    expect(usRelErrors({ tax_id: '912-70-1234' })).toEqual([
      'id_number_type: is required when tax_id is an ITIN',
      'id_number: is required when tax_id is an ITIN',
    ]);
    expect(usRelErrors({ tax_id: '912701234', id_number: 'D7654321' })).toEqual([
      'id_number_type: is required when tax_id is an ITIN',
    ]);
    expect(
      usRelValue({ tax_id: '912701234', id_number_type: 'us_drivers_license', id_number: 'D7654321' }).tax_id,
    ).toBe('912701234');
  });

  it('a customer who is not a US citizen, or does not say so, still presents a document', () => {
    const required = ['id_number_type: is required', 'id_number: is required'];
    // A US resident with no citizenship_code: the SSN alone does not make them a citizen.
    expect(usRelErrors({ citizenship_code: undefined })).toEqual(required);
    // A US resident with another citizenship and an ITIN.
    expect(usRelErrors({ citizenship_code: 'MX', tax_id: '912701234' })).toEqual(required);
    // The reference's non-US citizen (nonUSrel) track: no tax_id, a document required.
    expect(usRelErrors({ citizenship_code: 'GB', tax_id: undefined })).toEqual(required);
  });

  it('a US citizen without a tax id is told only that tax_id is required', () => {
    expect(usRelErrors({ tax_id: undefined })).toEqual(['tax_id: is required when citizenship_code is US']);
  });

  it('a document number without its type, or non_us_other_type without a type, is refused', () => {
    expect(usRelErrors({ id_number: 'D7654321' })).toEqual(['id_number_type: is required with id_number']);
    expect(usRelErrors({ non_us_other_type: 'Voter card' })).toEqual([
      'non_us_other_type: is only allowed when id_number_type is non_in_other or non_us_other',
    ]);
    expect(usRelErrors({ id_number_type: 'library_card' })[0]).toMatch(/^id_number_type: must be one of /);
  });

  it('signed_timestamp: within the last year and at most a day ahead, like kyc_timestamp', () => {
    expect(usRelErrors({ signed_timestamp: Date.UTC(2020, 0, 1) })).toEqual([OUTSIDE_WINDOW]);
    expect(usRelErrors({ signed_timestamp: NOW_MS - 365 * DAY_MS - 1 })).toEqual([OUTSIDE_WINDOW]);
    expect(usRelErrors({ signed_timestamp: NOW_MS + DAY_MS + 1 })).toEqual([OUTSIDE_WINDOW]);
    for (const signed_timestamp of [
      NOW_MS - 365 * DAY_MS,
      NOW_MS - 30 * DAY_MS,
      NOW_MS,
      NOW_MS + HOUR_MS,
      NOW_MS + DAY_MS,
    ]) {
      expect(usRelValue({ signed_timestamp }).signed_timestamp, String(signed_timestamp)).toBe(signed_timestamp);
    }
  });

  it('lists the window problem with every other problem at once', () => {
    expect(
      usRelErrors({ signed_timestamp: Date.UTC(2020, 0, 1), tax_id: '912701234', kyc_timestamp: NOW_MS + 2 * DAY_MS }),
    ).toEqual([
      'id_number_type: is required when tax_id is an ITIN',
      'id_number: is required when tax_id is an ITIN',
      OUTSIDE_WINDOW,
      'kyc_timestamp: must be within the last year (and at most a day ahead of server time)',
    ]);
  });

  it('leaves the minor endpoint on the spec rules: a document, and a UTMA signature not in the future', () => {
    const minor = { citizenship_code: 'US', tax_id: '123-45-6789', id_number_type: undefined, id_number: undefined };
    expect(minorErrors(minor)).toEqual(['id_number_type: is required', 'id_number: is required']);
    expect(minorErrors({ utma_signed_timestamp: NOW_MS + HOUR_MS })).toEqual([
      'utma_signed_timestamp: must not be in the future',
    ]);
  });
});

describe('validateMinor', () => {
  it('accepts a complete minor body and normalises it', () => {
    const value: NormalizedMinor = minorValue({});
    expect(value).toMatchObject({
      first_name: 'Byron',
      email_normalized: 'byron@example.com',
      country_alpha2: 'US',
      state_code: 'IL',
      date_of_birth: '2015-03-10',
      utma_signed_timestamp: NOW_MS - HOUR_MS,
      custodian_participant_code: 'AB12CD',
      custodian_relationship: 'parent',
    });
    expect(value).not.toHaveProperty('signed_timestamp');
  });

  it('reports the minor-only required fields and ignores signed_timestamp', () => {
    const body = minorBody({ signed_timestamp: NOW_MS });
    delete body.utma_signed_timestamp;
    delete body.custodian_participant_code;
    delete body.custodian_relationship;
    expect(errorsOf(validateMinor(body, NOW_MS))).toEqual([
      'utma_signed_timestamp: is required',
      'custodian_participant_code: is required',
      'custodian_relationship: is required',
    ]);
  });

  it('applies the shared field rules', () => {
    expect(
      minorErrors({ address_one: 'PO Box 1', country: 'Iran', state: undefined, zip: undefined, email: 'bad' }),
    ).toEqual([
      'email: must be a valid e-mail address',
      'address_one: PO Box addresses are not accepted; give a street address',
      'country: customers in Islamic Republic of Iran cannot be onboarded (sanctioned jurisdiction)',
    ]);
  });

  it('makes a customer a day short of 18 a minor and one exactly 18 today an adult', () => {
    expect(minorValue({ date_of_birth: '2008-06-16' }).date_of_birth).toBe('2008-06-16');
    expect(minorErrors({ date_of_birth: '2008-06-15' })).toEqual(['date_of_birth: a minor must be under 18 years old']);
  });

  it('accepts a leap-day birthday and keeps a leapling a minor on 28 February of a common year', () => {
    expect(minorValue({ date_of_birth: '2016-02-29' }).date_of_birth).toBe('2016-02-29');
    const body = minorBody({ date_of_birth: '2008-02-29', utma_signed_timestamp: Date.UTC(2026, 0, 1) });
    expect(valueOf(validateMinor(body, Date.UTC(2026, 1, 28, 23))).date_of_birth).toBe('2008-02-29');
    expect(errorsOf(validateMinor(body, Date.UTC(2026, 2, 1)))).toEqual([
      'date_of_birth: a minor must be under 18 years old',
    ]);
  });

  it('rejects a future or malformed utma_signed_timestamp', () => {
    expect(minorErrors({ utma_signed_timestamp: NOW_MS + 60_000 })).toEqual([
      'utma_signed_timestamp: must not be in the future',
    ]);
    expect(minorErrors({ utma_signed_timestamp: '1700000000000' })).toEqual([
      'utma_signed_timestamp: must be an integer UNIX time in milliseconds',
    ]);
  });

  it('accepts both custodian relationships and rejects others', () => {
    expect(minorValue({ custodian_relationship: 'legal_guardian' }).custodian_relationship).toBe('legal_guardian');
    expect(minorErrors({ custodian_relationship: 'uncle' })).toEqual([
      'custodian_relationship: must be one of parent, legal_guardian',
    ]);
  });

  it('requires a non-empty custodian_participant_code string', () => {
    expect(minorErrors({ custodian_participant_code: '  ' })).toEqual([
      'custodian_participant_code: must not be empty',
    ]);
    expect(minorErrors({ custodian_participant_code: { code: 'AB12CD' } })).toEqual([
      'custodian_participant_code: must be a string',
    ]);
  });

  it('passes a non-US minor without state or zip', () => {
    const value = minorValue({ country: 'IND', state: undefined, zip: undefined, id_number_type: 'aadhar_card' });
    expect(value.country_alpha2).toBe('IN');
    expect(value).not.toHaveProperty('state');
  });
});

describe('one schema per body', () => {
  it('reports a blank ID type as empty where a document is required, and reads it as not given where none is', () => {
    expect(customerErrors({ id_number_type: '  ' })).toEqual(['id_number_type: must not be empty']);
    expect(minorErrors({ id_number_type: '' })).toEqual(['id_number_type: must not be empty']);
    expect(customerErrors({ id_number_type: null })).toEqual(['id_number_type: is required']);
    const usCitizen = { citizenship_code: 'US', tax_id: '123-45-6789', id_number_type: ' ', id_number: undefined };
    expect(customerValue(usCitizen)).not.toHaveProperty('id_number_type');
  });

  it('lists a time with a fraction among the other problems rather than stopping at it', () => {
    expect(customerErrors({ country: 'Atlantis', signed_timestamp: NOW_MS - HOUR_MS + 0.5, kyc: 'pass' })).toEqual([
      'country: must be a supported country (English name, ISO alpha-2 or alpha-3 code)',
      'signed_timestamp: must be an integer UNIX time in milliseconds',
      'kyc_timestamp: is required with kyc',
    ]);
  });

  it('trims the values of a field with a fixed list, as it trims text', () => {
    expect(minorValue({ custodian_relationship: ' legal_guardian ' }).custodian_relationship).toBe('legal_guardian');
    expect(customerValue({ id_number_type: ' in_passport ' }).id_number_type).toBe('in_passport');
  });

  it('is the schema the API description documents: it reports the same problems', () => {
    // The description's schemas were built for another request time: these bodies break no rule of the time.
    const problemsOf = (schema: typeof customerRequest | typeof minorRequest, body: unknown) => {
      const parsed = schema.safeParse(body);
      return parsed.success ? [] : formatIssues(parsed.error.issues, 'body');
    };
    const wrongTypes = Object.fromEntries(Object.keys({ ...adultBody(), ...minorBody() }).map((field) => [field, 7]));
    const mixed = { first_name: ' ', country: 'Atlantis', id_number_type: 'ssn', kyc: 'fail', zip: '1', metadata: [] };
    for (const body of [{}, wrongTypes, mixed, 'text']) {
      expect(problemsOf(customerRequest, body)).toEqual(errorsOf(validateCustomer(body, NOW_MS)));
      expect(problemsOf(minorRequest, body)).toEqual(errorsOf(validateMinor(body, NOW_MS)));
    }
  });
});
