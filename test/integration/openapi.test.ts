import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { routes } from '../../infra/routes.js';
import { openApiText } from '../../infra/write-openapi.js';
import { EVENT_TYPES } from '../../lib/domain/events.js';
import { SIGNING_EXAMPLE } from '../../lib/openapi/signing-guide.js';
import { contractViolations } from '../support/contract.js';
import { newPlatform, send } from '../support/service.js';

type Json = Record<string, any>;

const document = async (): Promise<Json> => (await send('GET', '/openapi.json')).body;
const SIGNED = [{ ApiKey: [], Passphrase: [], Timestamp: [], Signature: [] }];
const UNSIGNED = new Set(['GET /time', 'GET /openapi.json', 'GET /docs', 'GET /docs/redoc.standalone.js']);

describe('GET /openapi.json', () => {
  it('is served unsigned: an OpenAPI 3.1 document with every route of the table, and nothing else', async () => {
    const response = await send('GET', '/openapi.json');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const doc = response.body as Json;
    expect(doc.openapi).toBe('3.1.0');
    const described = Object.entries(doc.paths as Json).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(described.sort()).toEqual(routes.map((route) => `${route.method} ${route.path}`).sort());
    // Internal functions (settlement tasks, the sweep, bank and custody events) are not routes.
    expect(JSON.stringify(Object.keys(doc.paths))).not.toMatch(/settlement|sweep|bank|custody|activate/i);
  });

  it('declares the four signing headers and requires them on every operation but the unsigned ones', async () => {
    const doc = await document();
    expect(
      Object.values(doc.components.securitySchemes).map((scheme: any) => [scheme.type, scheme.in, scheme.name]),
    ).toEqual([
      ['apiKey', 'header', 'X-SVC-API-KEY'],
      ['apiKey', 'header', 'X-SVC-PASSPHRASE'],
      ['apiKey', 'header', 'X-SVC-TIMESTAMP'],
      ['apiKey', 'header', 'X-SVC-SIGNED'],
    ]);
    for (const [path, item] of Object.entries(doc.paths as Json)) {
      for (const [method, operation] of Object.entries(item as Json)) {
        const name = `${method.toUpperCase()} ${path}`;
        expect(operation.security, name).toEqual(UNSIGNED.has(name) ? [] : SIGNED);
        if (!UNSIGNED.has(name))
          expect(Object.keys(operation.responses), name).toEqual(expect.arrayContaining(['400', '403', '500', '503']));
      }
    }
  });

  it('describes each request field from the schema the handler validates with: limits and patterns included', async () => {
    const doc = await document();
    const transfer = doc.paths['/transfers'].post;
    const body = transfer.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(
      expect.arrayContaining(['from_participant_code', 'to_participant_code', 'asset', 'amount']),
    );
    expect(body.properties.from_participant_code).toMatchObject({ type: 'string', minLength: 1, maxLength: 50 });
    expect(body.properties.asset).toMatchObject({ maxLength: 25 });
    expect(Object.keys(transfer.responses)).toEqual([
      '201',
      '400',
      '403',
      '404',
      '409',
      '413',
      '422',
      '429',
      '500',
      '503',
    ]);
    expect(transfer.responses['201'].content['application/json'].schema.properties.message).toEqual({
      $ref: '#/components/schemas/Transfer',
    });

    const list = doc.paths['/transfers'].get;
    expect(list.parameters.find((p: Json) => p.name === 'page_size')).toMatchObject({
      in: 'query',
      required: false,
      description: 'A whole number from 1 to 100; 100 when absent.',
      schema: { type: 'string', pattern: '^\\d{1,9}$' },
    });
    expect(list.parameters.find((p: Json) => p.name === 'cursor')).toMatchObject({
      in: 'query',
      schema: { maxLength: 2048 },
    });
    expect(list.responses['200'].content['application/json'].schema.properties.next_cursor).toMatchObject({
      type: ['string', 'null'],
    });
    const trades = doc.paths['/trades/{trade_id}'].get;
    expect(trades.parameters).toEqual([
      { name: 'trade_id', in: 'path', required: true, schema: { type: 'string', minLength: 1, maxLength: 100 } },
    ]);
  });

  it('documents the bodies the domain rules check (trades, customers) with their fields and limits', async () => {
    const doc = await document();
    const schemas = doc.components.schemas;
    expect(doc.paths['/trades'].post.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/TradeReport',
    });
    expect(schemas.TradeReport.required).toEqual(
      expect.arrayContaining(['client_trade_id', 'symbol', 'trade_price', 'transaction_timestamp', 'parties']),
    );
    expect(schemas.TradeReport.properties.client_trade_id).toMatchObject({ maxLength: 50 });
    expect(schemas.TradeReport.properties.parties).toMatchObject({ minItems: 2, maxItems: 2 });
    expect(doc.paths['/participants/customers/new'].post.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/CustomerRequest',
    });
    expect(schemas.CustomerRequest.required).toEqual(
      expect.arrayContaining(['first_name', 'email', 'date_of_birth', 'signed_timestamp']),
    );
    // A US citizen whose tax_id is an SSN needs no identity document (the reference's US-citizen track).
    expect(schemas.CustomerRequest.required).not.toContain('id_number_type');
    expect(schemas.MinorRequest.required).toEqual(expect.arrayContaining(['id_number_type']));
    const idType = schemas.CustomerRequest.properties.id_number_type;
    expect(idType.anyOf).toContainEqual({ type: 'null' });
    expect(idType.anyOf.find((variant: Json) => variant.enum).enum).toEqual(
      expect.arrayContaining(['us_passport', 'ssn', 'in_passport']),
    );
    expect(schemas.MinorRequest.required).toEqual(
      expect.arrayContaining(['custodian_participant_code', 'custodian_relationship', 'utma_signed_timestamp']),
    );
  });

  it('describes every success body and the error shapes, with examples', async () => {
    const doc = await document();
    for (const [path, item] of Object.entries(doc.paths as Json)) {
      for (const [method, operation] of Object.entries(item as Json)) {
        const [status, success] = Object.entries(operation.responses as Json)[0]!;
        const [mediaType, content] = Object.entries(success.content as Json)[0] as [string, Json];
        const hint = `${method.toUpperCase()} ${path} ${status} has no response schema: give routeHandler a \`response\` (lib/http/schemas)`;
        if (mediaType === 'application/json') expect(content.schema, hint).not.toEqual({ type: 'object' });
      }
    }
    const schemaOf = (status: string) => doc.components.responses[status].content['application/json'];
    expect(schemaOf('400').schema).toEqual({ $ref: '#/components/schemas/ErrorList' });
    expect(schemaOf('403').example).toEqual({ error: true, message: expect.any(String) });
    expect(schemaOf('404').example).toEqual({ error: expect.any(String) });
    for (const status of ['409', '422', '503'])
      expect(schemaOf(status).schema).toEqual({ $ref: '#/components/schemas/ErrorList' });
    expect(schemaOf('413').schema.oneOf).toContainEqual({ $ref: '#/components/schemas/ErrorList' });
    expect(doc.components.responses['503'].headers['Retry-After']).toBeDefined();
    expect(doc.components.schemas.ForbiddenError.properties.error).toEqual({ type: 'boolean', const: true });
  });

  it('describes the webhook deliveries: one per event type, each with its envelope', async () => {
    const doc = await document();
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_TYPES].sort());
    const trade = doc.components.schemas.TradeStatusChangedEvent;
    expect(trade.required).toEqual([
      'id',
      'type',
      'created_at',
      'platform_code',
      'resource',
      'sequence',
      'previous_status',
      'data',
    ]);
    expect(trade.properties.data).toEqual({ $ref: '#/components/schemas/Trade' });
    expect(doc.webhooks['trade.status_changed'].post.parameters.map((p: Json) => p.name)).toEqual([
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
    ]);
  });

  it('ignores any query, and answers 405 to other methods on the documentation routes', async () => {
    const plain = await send('GET', '/openapi.json');
    const queried = await send('GET', '/openapi.json?format=yaml&x=1');
    expect(queried.status).toBe(200);
    expect(queried.text).toBe(plain.text);
    expect((await send('GET', '/docs?theme=dark')).status).toBe(200);
    for (const path of ['/openapi.json', '/docs', '/docs/redoc.standalone.js']) {
      for (const method of ['POST', 'PUT', 'DELETE']) {
        const response = await send(method, path, {});
        expect(response.status, `${method} ${path}`).toBe(405);
      }
    }
  });
});

describe('the generated document', () => {
  it('is the same bytes every time it is generated, and is what the service serves', async () => {
    const first = await openApiText();
    expect(await openApiText()).toBe(first);
    expect(await document()).toEqual(JSON.parse(first));
  });

  it("signing guide: the worked example's signatures are what an independent HMAC gives, and the service accepts that scheme", async () => {
    const doc = await document();
    const description = doc.info.description as string;
    const { secret, timestamp, post, get } = SIGNING_EXAMPLE;
    for (const request of [post, get]) {
      const expected = createHmac('sha256', Buffer.from(secret, 'base64'))
        .update(timestamp + request.method + request.target + request.body)
        .digest('base64');
      expect(description).toContain(`X-SVC-SIGNED: ${expected}`);
    }
    expect(Buffer.from(secret, 'base64').toString('ascii')).toBe('an example secret; never use it!');
    expect(description).toContain(secret);

    // The scheme the guide teaches, computed by hand, is accepted by the service.
    const platform = await newPlatform();
    const now = String(Math.floor(Date.now() / 1000));
    const target = '/transfers?page=1';
    const signature = createHmac('sha256', Buffer.from(platform.credentials.api_secret, 'base64'))
      .update(`${now}GET${target}{}`)
      .digest('base64');
    const response = await send('GET', target, undefined, {
      unsigned: true,
      headers: {
        'X-SVC-API-KEY': platform.credentials.api_key,
        'X-SVC-PASSPHRASE': platform.credentials.passphrase,
        'X-SVC-TIMESTAMP': now,
        'X-SVC-SIGNED': signature,
      },
    });
    expect(response.status).toBe(200);
  });
});

describe('GET /docs', () => {
  it('serves the reference page and the renderer script from the service itself (no CDN)', async () => {
    const page = await send('GET', '/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.text).toContain("'/docs/redoc.standalone.js'");
    expect(page.text).not.toMatch(/https?:\/\//);
    const script = await send('GET', '/docs/redoc.standalone.js');
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    // Lambda answers at most 6 MB.
    expect(Buffer.byteLength(script.text)).toBeGreaterThan(100_000);
    expect(Buffer.byteLength(script.text)).toBeLessThan(6 * 1024 * 1024 * 0.75);
  });
});

describe('contract checking (test/support/contract.ts)', () => {
  const headers = new Headers({ 'content-type': 'application/json', 'x-request-id': 'r1' });
  const time = { message: { epoch: 1, epoch_ms: 1000, iso_8601: '1970-01-01T00:00:01.000Z' } };

  it('accepts a conforming response', async () => {
    expect(
      await contractViolations({ method: 'GET', target: '/time', status: 200, headers, text: JSON.stringify(time) }),
    ).toEqual([]);
  });

  it('refuses an undocumented field, a wrong type, an undocumented status, a missing header and a wrong error shape', async () => {
    const extra = { message: { ...time.message, leaked: 'x' } };
    expect(
      await contractViolations({ method: 'GET', target: '/time', status: 200, headers, text: JSON.stringify(extra) }),
    ).toEqual(["body/message: must NOT have additional properties 'leaked'"]);
    const wrongType = { message: { ...time.message, epoch_ms: '1000' } };
    expect(
      await contractViolations({
        method: 'GET',
        target: '/time',
        status: 200,
        headers,
        text: JSON.stringify(wrongType),
      }),
    ).toEqual(['body/message/epoch_ms: must be integer']);
    expect(
      (await contractViolations({ method: 'GET', target: '/time', status: 409, headers, text: '{"errors":["x"]}' }))[0],
    ).toMatch(/status 409 is not documented/);
    expect(
      await contractViolations({
        method: 'GET',
        target: '/time',
        status: 200,
        headers: new Headers({ 'content-type': 'application/json' }),
        text: JSON.stringify(time),
      }),
    ).toEqual(['header X-Request-Id is required and missing']);
    expect(
      await contractViolations({ method: 'GET', target: '/assets', status: 403, headers, text: '{"error":"no"}' }),
    ).toEqual(expect.arrayContaining(['body/error: must be boolean', "body: must have required property 'message'"]));
    expect(
      (await contractViolations({ method: 'GET', target: '/nowhere', status: 200, headers, text: '{}' }))[0],
    ).toMatch(/not an operation/);
  });

  it('refuses an accepted request whose body the document would not take', async () => {
    const created = { 'content-type': 'application/json', 'x-request-id': 'r2' };
    const problems = await contractViolations({
      method: 'POST',
      target: '/transfers',
      requestBody: JSON.stringify({ from_participant_code: 'A', to_participant_code: 'B', asset: 'USD' }),
      status: 400,
      headers: new Headers(created),
      text: '{"errors":["amount: is required"]}',
    });
    expect(problems).toEqual([]);
    const accepted = await contractViolations({
      method: 'POST',
      target: '/transfers',
      requestBody: JSON.stringify({ from_participant_code: 'A', to_participant_code: 'B', asset: 'USD' }),
      status: 201,
      headers: new Headers(created),
      text: '{}',
    });
    expect(accepted).toContain("request body: must have required property 'amount'");
  });
});
