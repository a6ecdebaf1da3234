import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { jsonNestingDepth, MAX_BODY_BYTES, MAX_JSON_DEPTH } from '../../lib/http/middleware/request-limits.js';
import { routes } from '../../infra/routes.js';
import { deposit } from '../../lib/ledger/deposit.js';
import { newPlatform, send, type TestPlatform } from '../support/service.js';
import { ctx } from '../support/context.js';

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('JSON nesting depth', () => {
  it('counts arrays and objects, not brackets inside strings', () => {
    expect(jsonNestingDepth('{}')).toBe(1);
    expect(jsonNestingDepth('{"a":[{"b":1}]}')).toBe(3);
    expect(jsonNestingDepth('{"a":"[[[[{{{{\\"[[["}')).toBe(1);
    expect(jsonNestingDepth('"plain"')).toBe(0);
    expect(jsonNestingDepth(nested(5000))).toBe(MAX_JSON_DEPTH + 1);
  });
});

describe('request limits', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await newPlatform();
    await deposit(ctx, {
      reference: randomUUID(),
      participantCode: platform.participantCode,
      asset: 'USD',
      amount: '100',
    });
  });

  const transfer = () => ({
    from_participant_code: platform.participantCode,
    to_participant_code: platform.participantCode,
    to_account_label: 'limits',
    asset: 'USD',
    amount: '1',
  });

  it('refuses a body over 1 MiB with 413 before anything is booked, signed or not', async () => {
    const padded = { ...transfer(), padding: 'x'.repeat(2 * 1024 * 1024) };
    const response = await platform.post('/transfers', padded);
    expect(response.status, response.text.slice(0, 200)).toBe(413);
    expect(response.body).toEqual({ errors: [expect.stringContaining(String(MAX_BODY_BYTES))] });
    expect(response.headers.get('x-request-id')).toBeTruthy();
    expect((await send('POST', '/transfers', padded)).status).toBe(413);
    const accounts = await platform.get('/accounts');
    expect(accounts.body.message.find((account: any) => account.account_label === 'limits')).toBeUndefined();
  });

  it('takes a body just under the limit to its normal answer', async () => {
    const response = await platform.post('/transfers', { ...transfer(), padding: 'x'.repeat(MAX_BODY_BYTES - 500) });
    expect(response.status, response.text.slice(0, 200)).toBe(201);
  });

  it('refuses JSON nested deeper than 32 levels with a 400 naming the limit, on every POST route', async () => {
    for (const route of routes.filter((r) => r.method === 'POST')) {
      for (const body of [`{"a":${nested(5000)}}`, `{"a":${nested(MAX_JSON_DEPTH)}}`]) {
        const response = await platform.post(route.path, undefined, { rawBody: body });
        expect(response.status, `${route.path}: ${response.text}`).toBe(400);
        expect(response.body.errors, route.path).toEqual([`body: JSON nested deeper than ${MAX_JSON_DEPTH} levels`]);
      }
    }
    // 32 levels are fine as far as the limit goes (the schema then judges the content).
    const response = await platform.post('/transfers', undefined, {
      rawBody: JSON.stringify({ ...transfer(), extra: JSON.parse(nested(MAX_JSON_DEPTH - 1)) }),
    });
    expect(response.status, response.text).toBe(201);
  });

  it('bounds every string field: an over-long value is a 400 naming it', async () => {
    const long = '1'.repeat(5000);
    const cases: Array<[string, unknown, string]> = [
      ['/transfers', { ...transfer(), amount: long }, 'amount'],
      ['/transfers', { ...transfer(), client_transfer_id: long }, 'client_transfer_id'],
      [
        '/rewards',
        { underlying: 'BTC', quoted_currency: 'USD', quantity: long, participant_code: platform.participantCode },
        'quantity',
      ],
      ['/awards/fund', { underlying: 'BTC', quoted_currency: 'USD', total: long }, 'total'],
      [
        '/awards/distribute',
        { asset: 'BTC', quantity: long, participant_codes: [platform.participantCode] },
        'quantity',
      ],
      [
        '/liquidity/execute',
        { quote_id: 'q', funding_details: { inbound_reference_id: 'r'.repeat(5000) } },
        'inbound_reference_id',
      ],
    ];
    for (const [path, body, field] of cases) {
      const response = await platform.post(path, body);
      expect(response.status, `${path} ${field}: ${response.text.slice(0, 300)}`).toBe(400);
      expect(response.body.errors.join(' '), path).toContain(field);
    }
    for (const path of [
      `/accounts?asset=${long}`,
      `/transfers?client_transfer_id=${long}`,
      `/trades?client_trade_id=${long}`,
      `/payments/status?transaction_id=${long}`,
      `/liquidity/rfq?side=buy&underlying=BTC&quoted_currency=USD&quantity=${long}`,
    ]) {
      const response = await platform.get(path);
      expect(response.status, `${path.slice(0, 40)}: ${response.text.slice(0, 300)}`).toBe(400);
    }
  });

  it('never answers a 5xx to whatever a client posts', async () => {
    const posts = routes.filter((route) => route.method === 'POST');
    const field = fc.oneof(
      fc.string({ maxLength: 30 }),
      fc.constantFrom(platform.participantCode, 'USD', 'BTC', '1', '0.5', '-1', '1e3', ''),
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
    );
    const plausible = fc.dictionary(
      fc.constantFrom(
        'underlying',
        'quoted_currency',
        'quantity',
        'total',
        'participant_code',
        'asset',
        'amount',
        'quote_id',
        'from_participant_code',
        'to_participant_code',
        'participant_codes',
        'funding_details',
        'first_name',
        'email',
        'date_of_birth',
        'symbol',
        'trade_price',
        'parties',
        '__proto__',
        'constructor',
      ),
      fc.oneof(
        field,
        fc.array(field, { maxLength: 3 }),
        fc.dictionary(fc.string({ maxLength: 10 }), field, { maxKeys: 3 }),
      ),
      { maxKeys: 8 },
    );
    const body = fc.oneof(
      plausible.map((value) => JSON.stringify(value)),
      fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)),
      fc.string({ maxLength: 40 }),
      fc.constantFrom(
        '',
        '{',
        '[]',
        'null',
        '"x"',
        '{"a":1,"a":2}',
        '\u0000',
        '{"quantity":"1'.padEnd(100, '9') + '"}',
      ),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...posts), body, async (route, raw) => {
        const response = await platform.post(route.path, undefined, { rawBody: raw });
        expect(response.status, `${route.path} ${raw.slice(0, 200)} -> ${response.text.slice(0, 300)}`).toBeLessThan(
          500,
        );
      }),
      { numRuns: 300 },
    );
  });
});
