import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { usCustomerBody, validSsn } from '../support/customer-bodies.js';

// This file's context (support/context.ts) is built when it is imported: log at info and emit metrics, as a
// deployment does (vitest.config.ts turns metrics off for the other files).
vi.hoisted(() => {
  process.env.LOG_LEVEL = 'info';
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
});

const { ctx } = await import('../support/context.js');
const { newPlatform, send } = await import('../support/service.js');
const { setPrice } = await import('../support/pricing.js');
const { fund } = await import('../support/ledger.js');
const { captureOutput } = await import('../support/output.js');

/**
 * The request log (docs/operations.md, "Logs") through the local server: every API request writes one JSON line with its request id,
 * platform, route, status, latency and error kind, a 4xx (a 403 too) as much as a 200, and no line this
 * process writes carries a secret, a passphrase or a tax id. Request and business metrics come out in
 * CloudWatch's embedded metric format. What is asserted is what reaches stdout, not calls to a mock.
 */
const output = captureOutput();
afterAll(() => {
  delete process.env.LOG_LEVEL;
});

const requestLines = (requestId: string) =>
  output.lines().filter((line) => line.message === 'request' && line.request_id === requestId);
const emf = output.emf;

describe('the request log', () => {
  it('writes one line per request with its outcome: a 200, a 400 and a 403', async () => {
    const platform = await newPlatform();

    const ok = await platform.get('/accounts', { headers: { 'X-Request-Id': `log-${randomUUID()}` } });
    expect(ok.status).toBe(200);
    const okId = ok.headers.get('x-request-id')!;
    expect(requestLines(okId)).toEqual([
      expect.objectContaining({
        level: 'INFO',
        message: 'request',
        request_id: okId,
        platform_code: platform.platformCode,
        route: 'GET /accounts',
        status: 200,
        latency_ms: expect.any(Number),
        service: expect.any(String),
        timestamp: expect.any(String),
      }),
    ]);
    expect(requestLines(okId)[0]).not.toHaveProperty('error_kind');

    const invalid = await platform.post('/transfers', { amount: 'lots' });
    expect(invalid.status).toBe(400);
    const invalidId = invalid.headers.get('x-request-id')!;
    expect(requestLines(invalidId)).toEqual([
      expect.objectContaining({
        status: 400,
        route: 'POST /transfers',
        platform_code: platform.platformCode,
        error_kind: 'ValidationError',
      }),
    ]);

    const forbidden = await platform.get('/accounts', { headers: { 'X-SVC-PASSPHRASE': 'not-the-passphrase' } });
    expect(forbidden.status).toBe(403);
    const forbiddenId = forbidden.headers.get('x-request-id')!;
    const [line403] = requestLines(forbiddenId);
    expect(requestLines(forbiddenId)).toHaveLength(1);
    expect(line403).toMatchObject({
      level: 'WARN',
      status: 403,
      route: 'GET /accounts',
      error_kind: 'AuthenticationError',
      auth_failure: 'invalid passphrase',
    });
    // Refused before the signature held: no platform is named on the caller's word.
    expect(line403).not.toHaveProperty('platform_code');

    const unsigned = await send('GET', '/time');
    expect(requestLines(unsigned.headers.get('x-request-id')!)).toEqual([
      expect.objectContaining({ status: 200, route: 'GET /time' }),
    ]);
  });

  it('never writes a secret, a passphrase or a tax id', async () => {
    const platform = await newPlatform();
    const taxId = validSsn();
    const created = await platform.post('/participants/customers/new', usCustomerBody(taxId, ctx.clock.nowMs()));
    expect(created.status, created.text).toBe(201);
    // A refused body carrying the same values: a log of bodies would show them here.
    await platform.post('/participants/customers/new', { tax_id: taxId, first_name: 'x' });
    await platform.get('/accounts', { headers: { 'X-SVC-PASSPHRASE': `${platform.credentials.passphrase}x` } });

    const everything = output.text();
    expect(requestLines(created.headers.get('x-request-id')!)).toHaveLength(1);
    for (const secret of [platform.credentials.api_secret, platform.credentials.passphrase, taxId])
      expect(everything).not.toContain(secret);
  });

  it('emits request and business metrics in the embedded metric format for a booking', async () => {
    await setPrice('LTC', 'USD', '100');
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '1000', 'ach_clearing');
    const quote = await platform.get('/liquidity/rfq?underlying=LTC&quoted_currency=USD&side=buy&total=100');
    expect(quote.status, quote.text).toBe(200);
    const before = emf().length;
    const executed = await platform.post('/liquidity/execute', {
      quote_id: quote.body.message.quote_id,
      funding_details: { external_account_id: randomUUID(), description: 'LTC ORDER', bank_fee: '1.50' },
    });
    expect(executed.status, executed.text).toBe(200);
    const documents = emf().slice(before);

    const request = documents.find((doc) => doc.Requests !== undefined && doc.route === 'POST /liquidity/execute');
    expect(request).toMatchObject({
      service: expect.any(String),
      route: 'POST /liquidity/execute',
      status_class: '2xx',
      Requests: 1,
      ServerErrors: 0,
      Latency: expect.any(Number),
    });
    const [directive] = request!._aws.CloudWatchMetrics;
    expect(directive.Namespace).toBe('TradingSettlement');
    expect(directive.Dimensions).toEqual(
      expect.arrayContaining([
        ['service', 'status_class'],
        ['service', 'route'],
        ['service', 'route', 'status_class'],
      ]),
    );
    expect(directive.Metrics).toEqual(
      expect.arrayContaining([
        { Name: 'Requests', Unit: 'Count' },
        { Name: 'ServerErrors', Unit: 'Count' },
        { Name: 'Latency', Unit: 'Milliseconds' },
      ]),
    );

    // The ACH-funded execution created a submitted payment: a business count of its own, by status only.
    const payment = documents.find((doc) => doc.PaymentStatusChanged !== undefined);
    expect(payment).toMatchObject({ status: 'submitted', PaymentStatusChanged: 1 });
    expect(payment!._aws.CloudWatchMetrics[0]).toMatchObject({
      Namespace: 'TradingSettlement',
      Dimensions: [['service', 'status']],
    });
    expect(payment).not.toHaveProperty('route');
  });
});
