import { randomUUID } from 'node:crypto';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../lib/context.js';
import { validateMinor, type NormalizedMinor } from '../../lib/domain/customers.js';
import { ConflictError, ServiceUnavailableError, ValidationError } from '../../lib/domain/errors.js';
import { createCustomer as storeCustomer } from '../../lib/store/participants.js';
import { newPlatform, type Response, type TestPlatform } from '../support/service.js';
import { clientWith, ctx, testContext } from '../support/context.js';

const CUSTOMERS = '/participants/customers/new';
const MINORS = '/participants/customers/minor';
const CODE = /^[A-Z0-9]{6}$/;
const DAY_MS = 86_400_000;

// Every response of this file is recorded so one final check can assert that no input produced a 5xx.
const seen: { what: string; status: number; text: string }[] = [];

function tracked(platform: TestPlatform): TestPlatform {
  const record = async <T>(what: string, response: Promise<Response<T>>) => {
    const settled = await response;
    seen.push({ what, status: settled.status, text: settled.text });
    return settled;
  };
  return {
    ...platform,
    request: (method, path, body, options) =>
      record(`${method} ${path}`, platform.request(method, path, body, options)),
    get: (path, options) => record(`GET ${path}`, platform.get(path, options)),
    post: (path, body, options) => record(`POST ${path}`, platform.post(path, body, options)),
  };
}

async function platformForTest(): Promise<TestPlatform> {
  return tracked(await newPlatform());
}

function uniqueEmail(tag = 'customer'): string {
  return `${tag}.${randomUUID().slice(0, 13)}@example.com`;
}

/** The UTC day `years` years and `days` days before now, as `YYYY-MM-DD`. */
function dayBefore(years: number, days = 0): string {
  const date = new Date(ctx.clock.nowMs() - days * DAY_MS);
  date.setUTCFullYear(date.getUTCFullYear() - years);
  return date.toISOString().slice(0, 10);
}

/**
 * Every optional field a customer response carries, null when the request had no value for it (design
 * section 3): the spec's fields, and for adults the reference API's US vocabulary.
 */
const MINOR_OPTIONAL_NULLS = {
  address_two: null,
  state: null,
  zip: null,
  non_us_other_type: null,
  id_issuing_authority: null,
  metadata: null,
};
const ADULT_OPTIONAL_NULLS = {
  ...MINOR_OPTIONAL_NULLS,
  middle_name: null,
  phone_number: null,
  postal_code: null,
  jurisdiction_code: null,
  citizenship_code: null,
  tax_id: null,
  kyc: null,
  kyc_timestamp: null,
  sanction_screening: null,
  sanction_screening_timestamp: null,
};

function adultBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    first_name: 'Ada',
    last_name: 'Lovelace',
    email: uniqueEmail('ada'),
    address_one: '12 Main Street',
    address_two: 'Apt 4',
    city: 'Springfield',
    state: 'IL',
    zip: '62701',
    country: 'United States',
    date_of_birth: '1980-01-31',
    id_number_type: 'non_in_passport',
    id_number: 'X1234567',
    id_issuing_authority: 'US',
    signed_timestamp: ctx.clock.nowMs() - 60_000,
    metadata: { crm_id: 'c-1' },
    ...overrides,
  };
}

function minorBody(custodianCode: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    first_name: 'Byron',
    last_name: 'Lovelace',
    email: uniqueEmail('byron'),
    address_one: '12 Main Street',
    city: 'Springfield',
    state: 'Illinois',
    zip: '62701-1234',
    country: 'USA',
    date_of_birth: dayBefore(10),
    id_number_type: 'in_passport',
    id_number: 'P7654321',
    utma_signed_timestamp: ctx.clock.nowMs() - 60_000,
    custodian_participant_code: custodianCode,
    custodian_relationship: 'parent',
    ...overrides,
  };
}

/** Drops the named fields (an override of `undefined` would still be sent by nobody, but reads oddly). */
function without(body: Record<string, unknown>, ...fields: string[]): Record<string, unknown> {
  const copy = { ...body };
  for (const field of fields) delete copy[field];
  return copy;
}

function expectFieldError(response: Response, field: string): void {
  expect(response.status, response.text).toBe(400);
  expect(response.body.errors, response.text).toEqual(
    expect.arrayContaining([expect.stringMatching(new RegExp(`^${field}: `))]),
  );
}

async function newCustodian(platform: TestPlatform, overrides: Record<string, unknown> = {}): Promise<string> {
  const response = await platform.post(CUSTOMERS, adultBody(overrides));
  expect(response.status, response.text).toBe(201);
  return response.body.message.participant_code;
}

afterAll(() => {
  // Every call above went through `tracked`; none may have crashed the service.
  expect(seen.length).toBeGreaterThan(100);
  expect(seen.filter((entry) => entry.status >= 500)).toEqual([]);
});

describe('POST /participants/customers/new', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await platformForTest();
  });

  it('creates an approved adult customer and echoes only the known fields', async () => {
    const body = adultBody({
      favourite_colour: 'green',
      participant_code: 'HACKED',
      status: 'locked',
      email_normalized: 'x@y.zz',
    });
    const response = await platform.post(CUSTOMERS, body);
    expect(response.status, response.text).toBe(201);
    const { favourite_colour: _a, participant_code: _b, status: _c, email_normalized: _d, ...known } = body;
    expect(response.body).toEqual({
      message: {
        ...ADULT_OPTIONAL_NULLS,
        ...known,
        platform_code: platform.platformCode,
        participant_code: expect.stringMatching(CODE),
        status: 'approved',
      },
    });
    expect(response.body.message.participant_code).not.toBe('HACKED');
  });

  it('echoes text as sent, trimmed, and answers blank optional fields as null', async () => {
    const email = uniqueEmail('Trim');
    const response = await platform.post(
      CUSTOMERS,
      adultBody({ first_name: '  Ada  ', email: ` ${email} `, address_two: '', id_issuing_authority: null }),
    );
    expect(response.status, response.text).toBe(201);
    expect(response.body.message).toMatchObject({ first_name: 'Ada', email, state: 'IL' });
    expect(response.body.message.address_two).toBeNull();
    expect(response.body.message.id_issuing_authority).toBeNull();
  });

  it('answers the same fields, null alike, when it creates the customer and when it is read back', async () => {
    const body = adultBody({ address_two: undefined, metadata: undefined });
    const created = await platform.post(CUSTOMERS, body);
    expect(created.status, created.text).toBe(201);
    const read = await platform.get(`/participants/${encodeURIComponent(String(body.email))}`);
    expect(read.status, read.text).toBe(200);
    const { kind: _k, is_minor: _m, created_at: _c, ...readFields } = read.body.message;
    expect(readFields).toEqual(created.body.message);
    expect(created.body.message).toMatchObject({ address_two: null, metadata: null, tax_id: null, middle_name: null });
  });

  it('requires an adult: 17 fails, 18 today passes', async () => {
    expectFieldError(await platform.post(CUSTOMERS, adultBody({ date_of_birth: dayBefore(18, -1) })), 'date_of_birth');
    expect((await platform.post(CUSTOMERS, adultBody({ date_of_birth: dayBefore(18) }))).status).toBe(201);
  });

  it('requires signed_timestamp within the last year and at most a day ahead, in milliseconds', async () => {
    expectFieldError(await platform.post(CUSTOMERS, without(adultBody(), 'signed_timestamp')), 'signed_timestamp');
    expectFieldError(
      await platform.post(CUSTOMERS, adultBody({ signed_timestamp: ctx.clock.nowMs() + DAY_MS + 3_600_000 })),
      'signed_timestamp',
    );
    expectFieldError(
      await platform.post(CUSTOMERS, adultBody({ signed_timestamp: ctx.clock.nowMs() - 366 * DAY_MS })),
      'signed_timestamp',
    );
    expectFieldError(
      await platform.post(CUSTOMERS, adultBody({ signed_timestamp: ctx.clock.nowSeconds() })),
      'signed_timestamp',
    );
    expect((await platform.post(CUSTOMERS, adultBody({ signed_timestamp: ctx.clock.nowMs() - DAY_MS }))).status).toBe(
      201,
    );
  });

  it('ignores the minor-only fields', async () => {
    const response = await platform.post(
      CUSTOMERS,
      adultBody({ custodian_participant_code: 'ABCDEF', utma_signed_timestamp: 1 }),
    );
    expect(response.status, response.text).toBe(201);
    expect(response.body.message).not.toHaveProperty('custodian_participant_code');
    expect(response.body.message).not.toHaveProperty('utma_signed_timestamp');
  });
});

describe('POST /participants/customers/minor', () => {
  let platform: TestPlatform;
  let custodian: string;
  beforeAll(async () => {
    platform = await platformForTest();
    custodian = await newCustodian(platform);
  });

  it('creates a minor linked to the custodian, echoing the request', async () => {
    const body = minorBody(custodian, { metadata: { school: 'Elm' }, unknown_field: 1, non_in_other_type: 'x' });
    const response = await platform.post(MINORS, body);
    expect(response.status, response.text).toBe(201);
    const { unknown_field: _a, non_in_other_type: _b, ...known } = body;
    expect(response.body).toEqual({
      message: {
        ...MINOR_OPTIONAL_NULLS,
        ...known,
        platform_code: platform.platformCode,
        participant_code: expect.stringMatching(CODE),
        status: 'approved',
      },
    });
    expect(response.body.message.participant_code).not.toBe(custodian);
  });

  it('accepts a non-US minor without state and zip', async () => {
    const response = await platform.post(MINORS, without(minorBody(custodian, { country: 'Germany' }), 'state', 'zip'));
    expect(response.status, response.text).toBe(201);
    expect(response.body.message.state).toBeNull();
    expect(response.body.message.zip).toBeNull();
  });

  it('accepts non_in_other with its description, echoed as non_us_other_type', async () => {
    const response = await platform.post(
      MINORS,
      minorBody(custodian, { id_number_type: 'non_in_other', non_us_other_type: 'school ID card' }),
    );
    expect(response.status, response.text).toBe(201);
    expect(response.body.message).toMatchObject({
      id_number_type: 'non_in_other',
      non_us_other_type: 'school ID card',
    });
    expect(response.body.message).not.toHaveProperty('non_in_other_type');
  });

  // One row per rule: a body that breaks it (and only it) and a body that satisfies it.
  const rules: {
    rule: string;
    field: string;
    failing: Record<string, unknown>;
    passing: Record<string, unknown>;
    drop?: string[];
  }[] = [
    {
      rule: 'e-mail format',
      field: 'email',
      failing: { email: 'byron@@example' },
      passing: { email: `Byron.${randomUUID().slice(0, 8)}+kid@Example.org` },
    },
    { rule: 'e-mail without a domain dot', field: 'email', failing: { email: 'byron@localhost' }, passing: {} },
    {
      rule: 'PO Box in address_one',
      field: 'address_one',
      failing: { address_one: 'P.O. Box 123' },
      passing: { address_one: '1 Boxwood Lane' },
    },
    {
      rule: 'PO Box spelled out',
      field: 'address_one',
      failing: { address_one: 'Post Office Box 9' },
      passing: { address_one: '9 Post Office Road' },
    },
    {
      rule: 'PO Box in address_two',
      field: 'address_two',
      failing: { address_two: 'PO Box 5' },
      passing: { address_two: 'Unit 5' },
    },
    { rule: 'unsupported country', field: 'country', failing: { country: 'Atlantis' }, passing: { country: 'Canada' } },
    {
      rule: 'sanctioned country by name',
      field: 'country',
      failing: { country: 'Iran' },
      passing: { country: 'Ireland' },
    },
    { rule: 'sanctioned country by code', field: 'country', failing: { country: 'CU' }, passing: { country: 'DE' } },
    { rule: 'country as alpha-3', field: 'country', failing: { country: 'PRK' }, passing: { country: 'GBR' } },
    { rule: 'US needs a state', field: 'state', failing: {}, drop: ['state'], passing: { state: 'California' } },
    { rule: 'US needs a zip', field: 'zip', failing: {}, drop: ['zip'], passing: { zip: '94105' } },
    { rule: 'supported state', field: 'state', failing: { state: 'Ontario' }, passing: { state: 'ny' } },
    { rule: 'zip format', field: 'zip', failing: { zip: '1234' }, passing: { zip: '12345-6789' } },
    { rule: 'zip with a bad suffix', field: 'zip', failing: { zip: '12345-67' }, passing: { zip: '12345' } },
    {
      rule: 'date_of_birth format',
      field: 'date_of_birth',
      failing: { date_of_birth: '03/10/2015' },
      passing: { date_of_birth: dayBefore(9) },
    },
    {
      rule: 'date_of_birth a real day',
      field: 'date_of_birth',
      failing: { date_of_birth: '2015-02-30' },
      passing: { date_of_birth: '2016-02-29' },
    },
    {
      rule: 'date_of_birth not in the future',
      field: 'date_of_birth',
      failing: { date_of_birth: dayBefore(0, -1) },
      passing: { date_of_birth: dayBefore(0) },
    },
    {
      rule: 'minor under 18',
      field: 'date_of_birth',
      failing: { date_of_birth: dayBefore(18) },
      passing: { date_of_birth: dayBefore(18, -1) },
    },
    {
      rule: 'supported ID type',
      field: 'id_number_type',
      failing: { id_number_type: 'us_passport' },
      passing: { id_number_type: 'aadhar_card' },
    },
    {
      rule: 'non_us_other_type required for non_in_other',
      field: 'non_us_other_type',
      failing: { id_number_type: 'non_in_other' },
      passing: { id_number_type: 'non_in_other', non_us_other_type: 'residence permit' },
    },
    {
      rule: 'non_us_other_type only with non_in_other',
      field: 'non_us_other_type',
      failing: { id_number_type: 'non_in_passport', non_us_other_type: 'residence permit' },
      passing: { id_number_type: 'non_in_passport' },
    },
    {
      rule: 'utma_signed_timestamp not in the future',
      field: 'utma_signed_timestamp',
      failing: { utma_signed_timestamp: ctx.clock.nowMs() + 600_000 },
      passing: { utma_signed_timestamp: ctx.clock.nowMs() - 1000 },
    },
    {
      rule: 'utma_signed_timestamp in milliseconds',
      field: 'utma_signed_timestamp',
      failing: { utma_signed_timestamp: ctx.clock.nowSeconds() },
      passing: {},
    },
    {
      rule: 'utma_signed_timestamp a number',
      field: 'utma_signed_timestamp',
      failing: { utma_signed_timestamp: 'yesterday' },
      passing: {},
    },
    {
      rule: 'custodian_relationship',
      field: 'custodian_relationship',
      failing: { custodian_relationship: 'uncle' },
      passing: { custodian_relationship: 'legal_guardian' },
    },
    {
      rule: 'first_name required',
      field: 'first_name',
      failing: { first_name: '   ' },
      passing: { first_name: 'Zoë' },
    },
    { rule: 'id_number required', field: 'id_number', failing: {}, drop: ['id_number'], passing: { id_number: 'A1' } },
    { rule: 'city a string', field: 'city', failing: { city: 42 }, passing: { city: 'Chicago' } },
    {
      rule: 'metadata an object',
      field: 'metadata',
      failing: { metadata: ['a'] },
      passing: { metadata: { nested: { deep: [1, 'two', null] } } },
    },
    {
      rule: 'custodian_participant_code required',
      field: 'custodian_participant_code',
      failing: {},
      drop: ['custodian_participant_code'],
      passing: {},
    },
  ];

  it.each(rules)('rule: $rule', async ({ field, failing, passing, drop = [] }) => {
    const failed = await platform.post(MINORS, without(minorBody(custodian, failing), ...drop));
    expectFieldError(failed, field);
    expect(failed.body.errors, failed.text).toHaveLength(1);
    const passed = await platform.post(MINORS, minorBody(custodian, passing));
    expect(passed.status, passed.text).toBe(201);
  });

  it('reports every problem of a body at once', async () => {
    const response = await platform.post(
      MINORS,
      minorBody(custodian, { email: 'nope', zip: 'ABCDE', custodian_relationship: 'aunt', id_number_type: 'passport' }),
    );
    expect(response.status).toBe(400);
    expect(response.body.errors.length).toBeGreaterThanOrEqual(4);
    for (const field of ['email', 'zip', 'custodian_relationship', 'id_number_type']) expectFieldError(response, field);
  });

  it('answers an empty or non-object body with 400, never a crash', async () => {
    for (const rawBody of ['', '[]', '"minor"', '42', 'null', '{"first_name":', '{}']) {
      const response = await platform.post(MINORS, undefined, { rawBody });
      expect(response.status, `${rawBody} -> ${response.text}`).toBe(400);
      expect(response.body.errors.length).toBeGreaterThan(0);
    }
  });

  it('stores metadata it cannot represent as a DynamoDB number and echoes it back', async () => {
    const body = minorBody(custodian);
    const rawBody = JSON.stringify(body).replace(
      /}$/,
      ',"metadata":{"big":123456789012345678901234567890,"tiny":1e-300,"": "empty key"}}',
    );
    const response = await platform.post(MINORS, undefined, { rawBody });
    expect(response.status, response.text).toBe(201);
    expect(response.body.message.metadata).toMatchObject({ tiny: 1e-300, '': 'empty key' });
    const listed = await platform.get(`/participants?participant_code=${response.body.message.participant_code}`);
    expect(listed.body.message[0].metadata).toEqual(response.body.message.metadata);
  });

  it('rejects overlong text and oversized metadata with 400', async () => {
    expectFieldError(await platform.post(MINORS, minorBody(custodian, { last_name: 'x'.repeat(201) })), 'last_name');
    expectFieldError(
      await platform.post(MINORS, minorBody(custodian, { metadata: { blob: 'x'.repeat(20_000) } })),
      'metadata',
    );
    expectFieldError(await platform.post(MINORS, minorBody('X'.repeat(500))), 'custodian_participant_code');
  });
});

describe('custodian rules', () => {
  let platform: TestPlatform;
  let other: TestPlatform;
  let custodian: string;
  let minor: string;
  let othersCustodian: string;
  beforeAll(async () => {
    [platform, other] = await Promise.all([platformForTest(), platformForTest()]);
    [custodian, othersCustodian] = await Promise.all([newCustodian(platform), newCustodian(other)]);
    const created = await platform.post(MINORS, minorBody(custodian));
    expect(created.status, created.text).toBe(201);
    minor = created.body.message.participant_code;
  });

  it('refuses an unknown custodian and another platform’s custodian with the same answer', async () => {
    const unknown = await platform.post(MINORS, minorBody('ZZZZZZ'));
    const foreign = await platform.post(MINORS, minorBody(othersCustodian));
    expectFieldError(unknown, 'custodian_participant_code');
    expectFieldError(foreign, 'custodian_participant_code');
    expect(foreign.body).toEqual(unknown.body);
    expect(foreign.text).not.toContain(other.platformCode);
  });

  it('refuses a minor as custodian', async () => {
    const response = await platform.post(MINORS, minorBody(minor));
    expectFieldError(response, 'custodian_participant_code');
    expect(response.body.errors.join()).toMatch(/minor cannot be a custodian/);
  });

  it('refuses the platform’s own participant as custodian', async () => {
    expectFieldError(await platform.post(MINORS, minorBody(platform.participantCode)), 'custodian_participant_code');
  });

  it('lists a custodian problem together with the body’s other problems', async () => {
    const response = await platform.post(MINORS, minorBody('ZZZZZZ', { custodian_relationship: 'friend', zip: 'x' }));
    expect(response.status).toBe(400);
    for (const field of ['zip', 'custodian_relationship', 'custodian_participant_code'])
      expectFieldError(response, field);
  });

  it('accepts an adult custodian of the caller’s platform in either relationship', async () => {
    for (const custodian_relationship of ['parent', 'legal_guardian']) {
      expect((await platform.post(MINORS, minorBody(custodian, { custodian_relationship }))).status).toBe(201);
    }
  });
});

describe('e-mail uniqueness per platform', () => {
  let platform: TestPlatform;
  let custodian: string;
  beforeAll(async () => {
    platform = await platformForTest();
    custodian = await newCustodian(platform);
  });

  it('refuses a second customer with the same e-mail in another letter case (409)', async () => {
    const email = uniqueEmail('Twin');
    expect((await platform.post(MINORS, minorBody(custodian, { email }))).status).toBe(201);
    const again = await platform.post(MINORS, minorBody(custodian, { email: email.toUpperCase() }));
    expect(again.status, again.text).toBe(409);
    expect(again.body).toEqual({ errors: ['email: already used by another customer of this platform'] });
  });

  it('holds across adults and minors', async () => {
    const email = uniqueEmail('shared');
    expect((await platform.post(CUSTOMERS, adultBody({ email }))).status).toBe(201);
    expect((await platform.post(MINORS, minorBody(custodian, { email: email.toUpperCase() }))).status).toBe(409);
    expect((await platform.post(CUSTOMERS, adultBody({ email: ` ${email} ` }))).status).toBe(409);
  });

  it('lists a taken e-mail with the other problems when the body has some (400)', async () => {
    const email = uniqueEmail('taken');
    expect((await platform.post(CUSTOMERS, adultBody({ email }))).status).toBe(201);
    const response = await platform.post(MINORS, minorBody(custodian, { email, zip: '1' }));
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([
      'zip: must be NNNNN or NNNNN-NNNN for a US address',
      'email: already used by another customer of this platform',
    ]);
  });

  it('lets another platform use the same e-mail', async () => {
    const email = uniqueEmail('everywhere');
    const other = await platformForTest();
    expect((await platform.post(CUSTOMERS, adultBody({ email }))).status).toBe(201);
    expect((await other.post(CUSTOMERS, adultBody({ email }))).status).toBe(201);
  });

  it('creates exactly one of 20 concurrent minors sharing one e-mail in different cases', async () => {
    const local = `racecondition.${randomUUID().slice(0, 8)}`;
    // Request i upper-cases the letters of "racec" picked by the bits of i: 20 distinct spellings.
    const spellings = Array.from({ length: 20 }, (_, i) => {
      const chars = [...local].map((char, position) =>
        position < 5 && (i >> position) & 1 ? char.toUpperCase() : char,
      );
      return `${chars.join('')}@Example.com`;
    });
    expect(new Set(spellings).size).toBe(20);
    const responses = await Promise.all(
      spellings.map((email) => platform.post(MINORS, minorBody(custodian, { email }))),
    );
    const statuses = responses.map((response) => response.status);
    expect(
      statuses.filter((status) => status === 201),
      JSON.stringify(statuses),
    ).toHaveLength(1);
    expect(
      statuses.every((status) => status === 201 || status === 409 || status === 400),
      JSON.stringify(statuses),
    ).toBe(true);
    for (const response of responses.filter((r) => r.status !== 201)) {
      expect(response.body.errors).toContain('email: already used by another customer of this platform');
    }
    const listed = await platform.get(`/participants?email=${encodeURIComponent(local.toUpperCase())}%40example.COM`);
    expect(listed.body.count).toBe(1);
    const winner = responses.find((response) => response.status === 201)!;
    expect(listed.body.message[0].participant_code).toBe(winner.body.message.participant_code);
  });
});

// The use cases read ahead for precise answers; these go straight to the store to show that the write
// transaction alone keeps the invariants when such a read is stale.
describe('the customer write transaction', () => {
  let platform: TestPlatform;
  let custodian: string;
  beforeAll(async () => {
    platform = await platformForTest();
    custodian = await newCustodian(platform);
  });

  const normalisedMinor = (custodianCode: string, overrides: Record<string, unknown> = {}): NormalizedMinor => {
    const verdict = validateMinor(minorBody(custodianCode, overrides), ctx.clock.nowMs());
    if (!verdict.ok) throw new Error(verdict.errors.join('; '));
    return verdict.value;
  };

  it('lets exactly one of 20 concurrent writes claim an e-mail', async () => {
    const email = uniqueEmail('store-race');
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, () =>
        storeCustomer(ctx, platform.platformCode, normalisedMinor(custodian, { email })),
      ),
    );
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    for (const result of results) {
      if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(ConflictError);
    }
  });

  /**
   * DynamoDB Local serialises transactions and never reports the conflicts real DynamoDB gives racing twins,
   * so this runs `write` with every TransactWriteItems call cancelled as conflicted.
   */
  async function underPermanentConflict<T>(write: (conflicted: AppContext) => Promise<T>): Promise<T> {
    const alwaysConflict = clientWith(
      (next, context) => async (args) => {
        if (context.commandName === 'TransactWriteItemsCommand') {
          throw new TransactionCanceledException({
            message: 'conflict',
            $metadata: {},
            CancellationReasons: [{ Code: 'TransactionConflict' }],
          });
        }
        return next(args);
      },
      'alwaysConflict',
      'initialize',
    );
    return write(testContext({ db: alwaysConflict }));
  }

  it('answers a loser whose conflict retries ran out as a duplicate once a twin holds the e-mail', async () => {
    const email = uniqueEmail('conflicted');
    await storeCustomer(ctx, platform.platformCode, normalisedMinor(custodian, { email }));
    await expect(
      underPermanentConflict((conflicted) =>
        storeCustomer(conflicted, platform.platformCode, normalisedMinor(custodian, { email })),
      ),
    ).rejects.toBeInstanceOf(ConflictError);
  });

  it('keeps the 503 when conflicts ran out and nobody holds the e-mail', async () => {
    await expect(
      underPermanentConflict((conflicted) =>
        storeCustomer(conflicted, platform.platformCode, normalisedMinor(custodian)),
      ),
    ).rejects.toBeInstanceOf(ServiceUnavailableError);
  });

  it('refuses a custodian that does not qualify at write time', async () => {
    const minor = await storeCustomer(ctx, platform.platformCode, normalisedMinor(custodian));
    for (const code of [minor.participant_code, 'ZZZZZZ', platform.participantCode]) {
      await expect(storeCustomer(ctx, platform.platformCode, normalisedMinor(code))).rejects.toBeInstanceOf(
        ValidationError,
      );
    }
    const foreign = await platformForTest();
    await expect(storeCustomer(ctx, foreign.platformCode, normalisedMinor(custodian))).rejects.toBeInstanceOf(
      ValidationError,
    );
  });
});

describe('GET /participants', () => {
  let platform: TestPlatform;
  let other: TestPlatform;
  let adults: { code: string; email: string }[];
  let minorCode: string;
  beforeAll(async () => {
    [platform, other] = await Promise.all([platformForTest(), platformForTest()]);
    adults = [];
    // One at a time: the listing is ordered by creation time.
    for (const tag of ['First', 'Second', 'Third']) {
      const email = uniqueEmail(tag);
      const response = await platform.post(CUSTOMERS, adultBody({ email }));
      expect(response.status, response.text).toBe(201);
      adults.push({ code: response.body.message.participant_code, email });
    }
    const minor = await platform.post(MINORS, minorBody(adults[0]!.code));
    minorCode = minor.body.message.participant_code;
    await newCustodian(other);
  });

  it('lists the platform’s own participant and its customers, oldest first', async () => {
    const response = await platform.get('/participants');
    expect(response.status, response.text).toBe(200);
    expect(response.body).toMatchObject({ page: 1, page_size: 100, total_pages: 1, count: 5 });
    const codes = response.body.message.map((participant: any) => participant.participant_code);
    expect(codes).toEqual([platform.participantCode, ...adults.map((adult) => adult.code), minorCode]);
    expect(response.body.message[0]).toEqual({
      participant_code: platform.participantCode,
      platform_code: platform.platformCode,
      kind: 'platform',
      status: 'approved',
      created_at: expect.any(Number),
    });
    expect(response.body.message[1]).toMatchObject({
      kind: 'customer',
      is_minor: false,
      email: adults[0]!.email,
      signed_timestamp: expect.any(Number),
    });
    expect(response.body.message[4]).toMatchObject({
      kind: 'customer',
      is_minor: true,
      custodian_participant_code: adults[0]!.code,
    });
    expect(response.body.message[4]).not.toHaveProperty('email_normalized');
  });

  it('filters by e-mail, case-insensitively and exactly', async () => {
    const target = adults[1]!;
    const response = await platform.get(`/participants?email=${encodeURIComponent(target.email.toUpperCase())}`);
    expect(response.body).toMatchObject({ count: 1, message: [{ participant_code: target.code }] });
    const prefix = await platform.get(`/participants?email=${encodeURIComponent(target.email.slice(0, -4))}`);
    expect(prefix.body).toMatchObject({ count: 0, message: [], total_pages: 1 });
  });

  it('filters by participant code, alone or with the e-mail', async () => {
    const target = adults[2]!;
    expect((await platform.get(`/participants?participant_code=${target.code}`)).body).toMatchObject({
      count: 1,
      message: [{ email: target.email }],
    });
    const both = await platform.get(
      `/participants?participant_code=${target.code}&email=${encodeURIComponent(target.email)}`,
    );
    expect(both.body.count).toBe(1);
    const mismatch = await platform.get(
      `/participants?participant_code=${adults[0]!.code}&email=${encodeURIComponent(target.email)}`,
    );
    expect(mismatch.body.count).toBe(0);
  });

  it('pages with page and page_size', async () => {
    const first = await platform.get('/participants?page_size=2');
    const third = await platform.get('/participants?page_size=2&page=3');
    expect(first.body).toMatchObject({ page: 1, page_size: 2, total_pages: 3, count: 5 });
    expect(first.body.message).toHaveLength(2);
    expect(third.body.message.map((participant: any) => participant.participant_code)).toEqual([minorCode]);
    expect((await platform.get('/participants?page=9')).body).toMatchObject({ page: 9, count: 5, message: [] });
  });

  it('rejects bad paging with 400', async () => {
    for (const query of ['page_size=101', 'page_size=0', 'page=0', 'page=abc', 'page_size=1.5', 'email=']) {
      const response = await platform.get(`/participants?${query}`);
      expect(response.status, `${query} -> ${response.text}`).toBe(400);
    }
  });

  it('never shows another platform’s participants', async () => {
    const theirs = await other.get('/participants');
    expect(theirs.body.count).toBe(2);
    const ourCodes = [platform.participantCode, ...adults.map((adult) => adult.code), minorCode];
    for (const participant of theirs.body.message) expect(ourCodes).not.toContain(participant.participant_code);
    for (const query of [
      `participant_code=${adults[0]!.code}`,
      `email=${encodeURIComponent(adults[0]!.email)}`,
      `participant_code=${platform.participantCode}`,
    ]) {
      const response = await other.get(`/participants?${query}`);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ count: 0, message: [] });
    }
  });
});
