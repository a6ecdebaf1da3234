import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { captureOutput } from '../support/output.js';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { participantEntity } from '../../lib/store/entities/participant.js';
import { newPlatform, type TestPlatform } from '../support/service.js';
import { ctx } from '../support/context.js';

/**
 * Customers as clients of the reference API create them (its customer creation, the
 * US and non-US variants), through HTTP with signed requests. The tax id must appear nowhere but as its
 * last four digits: every line this process writes while the file runs is scanned for it.
 */

const CUSTOMERS = '/participants/customers/new';
const HOUR_MS = 3_600_000;

const output = captureOutput();

/** Every tax id this file sends, for the final scan of everything the process wrote. */
const sentTaxIds: string[] = ['DE1234567890'];

/** A random SSN (area 1xx-5xx, never 000/666/9xx or a zero group). */
function freshSsn(): { digits: string; dashed: string } {
  const n = () => Math.floor(Math.random() * 10);
  const digits = `${1 + Math.floor(Math.random() * 5)}${n()}${n()}${1 + Math.floor(Math.random() * 9)}${n()}${1 + Math.floor(Math.random() * 9)}${n()}${n()}${n()}`;
  sentTaxIds.push(digits);
  return { digits, dashed: `${digits.slice(0, 3)}-${digits.slice(3, 5)}-${digits.slice(5)}` };
}

/** A random ITIN (nine digits starting with 9; group 70-88 as the IRS issues them). */
function freshItin(): string {
  const n = () => Math.floor(Math.random() * 10);
  const digits = `9${n()}${n()}${70 + Math.floor(Math.random() * 19)}${1 + Math.floor(Math.random() * 9)}${n()}${n()}${n()}`;
  sentTaxIds.push(digits);
  return digits;
}

/**
 * The reference API's US-citizen body as its "USrel" variant requires it: `zip`,
 * `jurisdiction_code`, `citizenship_code` US and an SSN as `tax_id`, no identity document; the W-form
 * fields are the reference's, not kept here.
 */
function usRelCustomer(taxId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const now = ctx.clock.nowMs();
  return {
    first_name: 'Jane',
    last_name: 'Public',
    email: `jane.${randomUUID()}@example.com`,
    phone_number: '15557778888',
    date_of_birth: '1985-09-02',
    address_one: '1 Market St',
    city: 'San Francisco',
    zip: '94105',
    jurisdiction_code: 'US-CA',
    citizenship_code: 'US',
    tax_id: taxId,
    signed_timestamp: now - HOUR_MS,
    kyc: 'pass',
    kyc_timestamp: now - HOUR_MS,
    sanction_screening: 'pass',
    sanction_screening_timestamp: now - HOUR_MS,
    is_w_form_certified: true,
    w_form_certification: now - HOUR_MS,
    signature: 'Jane Public',
    signature_timestamp: now - HOUR_MS,
    payee_exemption: 'NONE',
    fatca_reporting_exemption: 'NONE',
    is_not_subject_backup_withholding: true,
    ...overrides,
  };
}

/** The reference API's US customer (its "USrel"/"full" variants): jurisdiction_code, no state, zip or country. */
function usReferenceCustomer(taxId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const now = ctx.clock.nowMs();
  return {
    first_name: 'Jane',
    middle_name: 'Q',
    last_name: 'Public',
    email: `jane.${randomUUID()}@example.com`,
    phone_number: '15557778888',
    address_one: '1 Market St',
    city: 'San Francisco',
    postal_code: '94105',
    jurisdiction_code: 'US-CA',
    citizenship_code: 'US',
    tax_id: taxId,
    date_of_birth: '1985-09-02',
    id_number_type: 'us_drivers_license',
    id_number: 'D7654321',
    id_issuing_authority: 'US',
    signed_timestamp: now - HOUR_MS,
    kyc: 'pass',
    kyc_timestamp: now - HOUR_MS,
    sanction_screening: 'pass',
    sanction_screening_timestamp: now - HOUR_MS,
    // Fields of the reference API we don't keep: ignored, never echoed.
    idv: 'pass',
    liveness_check: 'pass',
    onboarding_profile: 'kyc_track',
    ...overrides,
  };
}

describe('POST /participants/customers/new with the reference API US vocabulary', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await newPlatform();
  });

  const variants: [string, (taxId: string) => Record<string, unknown>][] = [
    ['US customer, jurisdiction_code only, driving licence', (taxId) => usReferenceCustomer(taxId)],
    [
      'US customer, country USA agreeing with jurisdiction_code, us_passport',
      (taxId) =>
        usReferenceCustomer(taxId, { country: 'USA', state: 'CA', zip: '94105', id_number_type: 'us_passport' }),
    ],
    [
      'US customer, ssn as the ID, the number only in tax_id',
      (taxId) => usReferenceCustomer(taxId, { id_number_type: 'ssn', id_number: undefined }),
    ],
    [
      'US customer, country as alpha-2, us_passport_card',
      (taxId) => usReferenceCustomer(taxId, { country: 'US', id_number_type: 'us_passport_card' }),
    ],
    [
      'non-US citizen resident in the US, non_us_other with its type',
      (taxId) =>
        usReferenceCustomer(taxId, {
          citizenship_code: 'GB',
          id_number_type: 'non_us_other',
          non_us_other_type: 'UK national ID',
        }),
    ],
    [
      'EU customer, country name, eu_drivers_license, foreign TIN',
      () =>
        usReferenceCustomer('DE 123 456 7890', {
          jurisdiction_code: undefined,
          country: 'Germany',
          postal_code: '10115',
          citizenship_code: 'DE',
          phone_number: '+49 30 1234567',
          id_number_type: 'eu_drivers_license',
        }),
    ],
  ];

  for (const [name, makeBody] of variants) {
    it(`${name}: 201, every given field answered, the tax id as its last four only`, async () => {
      const ssn = freshSsn();
      const body = makeBody(ssn.dashed);
      const response = await platform.post(CUSTOMERS, body);
      expect(response.status, response.text).toBe(201);
      const message = response.body.message;
      const taxDigits = String(body.tax_id).replace(/[ -]/g, '');
      expect(message).toMatchObject({
        platform_code: platform.platformCode,
        participant_code: expect.stringMatching(/^[A-Z0-9]{6}$/),
        status: 'approved',
        first_name: body.first_name,
        middle_name: body.middle_name,
        last_name: body.last_name,
        email: body.email,
        phone_number: body.phone_number,
        postal_code: body.postal_code,
        citizenship_code: body.citizenship_code,
        tax_id: `*****${taxDigits.slice(-4)}`,
        id_number_type: body.id_number_type,
        kyc: 'pass',
        kyc_timestamp: body.kyc_timestamp,
        sanction_screening: 'pass',
        sanction_screening_timestamp: body.sanction_screening_timestamp,
        signed_timestamp: body.signed_timestamp,
      });
      if (body.jurisdiction_code) expect(message.jurisdiction_code).toBe(body.jurisdiction_code);
      if (body.non_us_other_type) expect(message.non_us_other_type).toBe(body.non_us_other_type);
      for (const dropped of [
        'idv',
        'liveness_check',
        'onboarding_profile',
        'tax_id_encrypted',
        'tax_id_last4',
        'phone_e164',
      ]) {
        expect(message).not.toHaveProperty(dropped);
      }
      expect(response.text).not.toContain(taxDigits);
      expect(response.text).not.toContain(String(body.tax_id));

      // Stored encrypted: nothing in the item holds the number.
      const { Item: stored } = await ctx.db.send(
        new GetCommand(participantEntity.get(ctx.tables, { participant_code: message.participant_code })),
      );
      expect(stored?.tax_id_encrypted).toMatch(/^(aes|kms):/);
      expect(JSON.stringify(stored)).not.toContain(taxDigits);

      // Listed the same way.
      const listed = await platform.get(`/participants?participant_code=${message.participant_code}`);
      expect(listed.status).toBe(200);
      expect(listed.body.message[0]).toMatchObject({
        tax_id: `*****${taxDigits.slice(-4)}`,
        middle_name: body.middle_name,
      });
      expect(listed.text).not.toContain(taxDigits);
    });
  }

  it('answers bad reference fields with one 400 naming each, and writes nothing', async () => {
    const ssn = freshSsn();
    const email = `bad.${randomUUID()}@example.com`;
    const response = await platform.post(
      CUSTOMERS,
      usReferenceCustomer(`${ssn.dashed}0`, { email, state: 'Texas', phone_number: '555', citizenship_code: 'USA' }),
    );
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([
      'jurisdiction_code: US-CA disagrees with state (Texas); give one, or both agreeing',
      'citizenship_code: must be an ISO 3166-1 alpha-2 country code',
      'phone_number: must be a phone number with its country code (E.164, e.g. +15557778888)',
      'tax_id: must be a 9-digit SSN or ITIN (NNNNNNNNN or NNN-NN-NNNN)',
    ]);
    expect(response.text).not.toContain(ssn.digits.slice(0, 5));
    // Nothing written: the e-mail is still free.
    const again = await platform.post(CUSTOMERS, usReferenceCustomer(ssn.dashed, { email }));
    expect(again.status, again.text).toBe(201);
  });

  const badInputs: [string, Record<string, unknown>, string][] = [
    [
      'a code disagreeing with state',
      { state: 'NY' },
      'jurisdiction_code: US-CA disagrees with state (NY); give one, or both agreeing',
    ],
    [
      'a code disagreeing with country',
      { country: 'Canada', citizenship_code: 'CA', tax_id: undefined, id_number_type: 'passport' },
      'jurisdiction_code: US-CA disagrees with country (Canada); give one, or both agreeing',
    ],
    [
      'an unknown jurisdiction_code',
      { jurisdiction_code: 'FR-75' },
      'jurisdiction_code: must be the ISO 3166-2 code of a US state, DC or inhabited territory (e.g. US-CA)',
    ],
    ['a malformed tax_id', { tax_id: '12-345' }, 'tax_id: must be a 9-digit SSN or ITIN (NNNNNNNNN or NNN-NN-NNNN)'],
    [
      'a malformed phone number',
      { phone_number: '+1 23' },
      'phone_number: must be a phone number with its country code (E.164, e.g. +15557778888)',
    ],
    [
      'an ID type the country cannot use',
      { id_number_type: 'eu_drivers_license' },
      'id_number_type: eu_drivers_license is issued to residents of the EU/EEA; country is US',
    ],
    [
      'non_us_other without its type',
      { citizenship_code: 'GB', id_number_type: 'non_us_other' },
      'non_us_other_type: is required when id_number_type is non_us_other',
    ],
    [
      'a failed sanctions screening',
      { sanction_screening: 'fail' },
      'sanction_screening: a customer who failed sanctions screening cannot be onboarded',
    ],
  ];
  for (const [name, overrides, error] of badInputs) {
    it(`refuses ${name} with a 400 naming the field`, async () => {
      const response = await platform.post(CUSTOMERS, usReferenceCustomer(freshSsn().dashed, overrides));
      expect(response.status, response.text).toBe(400);
      expect(response.body.errors).toEqual([error]);
    });
  }

  it('keeps the minor endpoint on the spec rules', async () => {
    const custodian = await platform.post(CUSTOMERS, usReferenceCustomer(freshSsn().dashed));
    expect(custodian.status).toBe(201);
    const response = await platform.post('/participants/customers/minor', {
      first_name: 'Kid',
      last_name: 'Public',
      email: `kid.${randomUUID()}@example.com`,
      address_one: '1 Market St',
      city: 'San Francisco',
      jurisdiction_code: 'US-CA',
      country: 'United States',
      date_of_birth: '2016-04-01',
      id_number_type: 'us_passport',
      id_number: 'P1',
      utma_signed_timestamp: ctx.clock.nowMs() - HOUR_MS,
      custodian_participant_code: custodian.body.message.participant_code,
      custodian_relationship: 'parent',
    });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([
      'state: is required when country is the United States',
      'zip: is required when country is the United States',
      'id_number_type: must be one of aadhar_card, in_driving_license, in_passport, in_passport_card, non_in_passport, non_in_other',
    ]);
  });

  describe('the reference rules for the identity document and signed_timestamp', () => {
    const DAY_MS = 24 * HOUR_MS;
    const OUTSIDE_WINDOW = 'signed_timestamp: must be within the last year (and at most a day ahead of server time)';

    it("the reference's US-citizen body, with an SSN and no identity document: 201, read back the same", async () => {
      const ssn = freshSsn();
      const body = usRelCustomer(ssn.dashed);
      const response = await platform.post(CUSTOMERS, body);
      expect(response.status, response.text).toBe(201);
      expect(response.body.message).toMatchObject({
        status: 'approved',
        citizenship_code: 'US',
        jurisdiction_code: 'US-CA',
        zip: '94105',
        phone_number: '15557778888',
        tax_id: `*****${ssn.digits.slice(-4)}`,
        id_number_type: null,
        id_number: null,
        signed_timestamp: body.signed_timestamp,
      });
      for (const dropped of ['is_w_form_certified', 'signature', 'payee_exemption'])
        expect(response.body.message).not.toHaveProperty(dropped);
      const read = await platform.get(`/participants/${encodeURIComponent(String(body.email))}`);
      expect(read.status, read.text).toBe(200);
      expect(read.body.message).toMatchObject({
        participant_code: response.body.message.participant_code,
        id_number_type: null,
        id_number: null,
      });
    });

    it('an ITIN as tax_id without id_number_type: 400 naming the document fields, nothing written', async () => {
      const email = `itin.${randomUUID()}@example.com`;
      const response = await platform.post(CUSTOMERS, usRelCustomer(freshItin(), { email }));
      expect(response.status, response.text).toBe(400);
      expect(response.body.errors).toEqual([
        'id_number_type: is required when tax_id is an ITIN',
        'id_number: is required when tax_id is an ITIN',
      ]);
      const withDocument = await platform.post(
        CUSTOMERS,
        usRelCustomer(freshItin(), { email, id_number_type: 'us_passport', id_number: 'P1234567' }),
      );
      expect(withDocument.status, withDocument.text).toBe(201);
    });

    it('signed_timestamp from 2020: 400, nothing written', async () => {
      const email = `old.${randomUUID()}@example.com`;
      const response = await platform.post(
        CUSTOMERS,
        usRelCustomer(freshSsn().dashed, { email, signed_timestamp: Date.UTC(2020, 0, 1) }),
      );
      expect(response.status, response.text).toBe(400);
      expect(response.body.errors).toEqual([OUTSIDE_WINDOW]);
      expect((await platform.post(CUSTOMERS, usRelCustomer(freshSsn().dashed, { email }))).status).toBe(201);
    });

    it('signed_timestamp more than a day ahead: 400', async () => {
      const response = await platform.post(
        CUSTOMERS,
        usRelCustomer(freshSsn().dashed, { signed_timestamp: ctx.clock.nowMs() + DAY_MS + 60_000 }),
      );
      expect(response.status, response.text).toBe(400);
      expect(response.body.errors).toEqual([OUTSIDE_WINDOW]);
    });

    it('signed_timestamp within the window (almost a year old, an hour ahead): 201', async () => {
      for (const offsetMs of [-364 * DAY_MS, HOUR_MS]) {
        const body = usRelCustomer(freshSsn().dashed, { signed_timestamp: ctx.clock.nowMs() + offsetMs });
        const response = await platform.post(CUSTOMERS, body);
        expect(response.status, response.text).toBe(201);
        expect(response.body.message.signed_timestamp).toBe(body.signed_timestamp);
      }
    });

    it("a US citizen onboarded without a document can be a minor's custodian; the minor still presents one", async () => {
      const custodian = await platform.post(CUSTOMERS, usRelCustomer(freshSsn().dashed));
      expect(custodian.status, custodian.text).toBe(201);
      const minor = {
        first_name: 'Kid',
        last_name: 'Public',
        email: `kid.${randomUUID()}@example.com`,
        address_one: '1 Market St',
        city: 'San Francisco',
        state: 'CA',
        zip: '94105',
        country: 'United States',
        date_of_birth: '2016-04-01',
        utma_signed_timestamp: ctx.clock.nowMs() - HOUR_MS,
        custodian_participant_code: custodian.body.message.participant_code,
        custodian_relationship: 'parent',
      };
      const withoutDocument = await platform.post('/participants/customers/minor', minor);
      expect(withoutDocument.status).toBe(400);
      expect(withoutDocument.body.errors).toEqual(['id_number_type: is required', 'id_number: is required']);
      const created = await platform.post('/participants/customers/minor', {
        ...minor,
        id_number_type: 'in_passport',
        id_number: 'P1',
      });
      expect(created.status, created.text).toBe(201);
    });
  });

  it('writes no tax id to any log line: only its last four digits may appear anywhere', () => {
    expect(sentTaxIds.length).toBeGreaterThan(10);
    const everything = output.text().replace(/[ -]/g, '');
    const leaked = sentTaxIds.filter((taxId) => everything.includes(taxId) || everything.includes(taxId.slice(0, 5)));
    expect(leaked).toEqual([]);
  });
});
