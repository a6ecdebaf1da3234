import { describe, expect, it } from 'vitest';
import {
  ConflictError,
  ForbiddenError,
  IdempotencyMismatchError,
  InsufficientFundsError,
  NotFoundError,
  QuoteExpiredError,
  ServiceUnavailableError,
  ValidationError,
} from '../../lib/domain/errors.js';
import { errorToHttp } from '../../lib/http/error-mapper.js';

describe('error mapper', () => {
  it.each([
    [new ValidationError(['amount: bad', 'asset: bad']), 400, { errors: ['amount: bad', 'asset: bad'] }],
    [new InsufficientFundsError('from: insufficient USD'), 400, { errors: ['from: insufficient USD'] }],
    [new QuoteExpiredError(), 400, { errors: ['quote_id: quote has expired'] }],
    [new ForbiddenError('invalid signature'), 403, { error: true, message: 'invalid signature' }],
    [new NotFoundError('transfer not found: 1'), 404, { error: 'transfer not found: 1' }],
    [new ConflictError(['client_transfer_id: already used']), 409, { errors: ['client_transfer_id: already used'] }],
    [new IdempotencyMismatchError(), 422, { errors: ['X-Request-Id: already used with a different request'] }],
  ])('maps %s to its status and exact body', (error, status, body) => {
    const mapped = errorToHttp(error);
    expect(mapped.statusCode).toBe(status);
    expect(mapped.body).toEqual(body);
    expect(mapped.internal).toBe(false);
  });

  it('answers 503 with Retry-After for unavailability and DynamoDB throttling', () => {
    expect(errorToHttp(new ServiceUnavailableError('price is stale', 5))).toMatchObject({
      statusCode: 503,
      headers: { 'Retry-After': '5' },
    });
    const throttled = Object.assign(new Error('slow down'), { name: 'ProvisionedThroughputExceededException' });
    expect(errorToHttp(throttled)).toMatchObject({ statusCode: 503, headers: { 'Retry-After': '1' } });
  });

  it('answers 503 with Retry-After for an AWS service fault the SDK gave up retrying (DynamoDB InternalServerError)', () => {
    const fault = Object.assign(new Error('This action timed out because it too long waiting for a lock.'), {
      name: 'InternalServerError',
      $fault: 'server',
      $metadata: { httpStatusCode: 500, attempts: 3 },
    });
    expect(errorToHttp(fault)).toMatchObject({
      statusCode: 503,
      headers: { 'Retry-After': '1' },
      body: { errors: ['service busy, retry shortly'] },
      internal: true,
    });
    // A client-side fault of the SDK (a request we built wrong) is ours: still a 500.
    const ours = Object.assign(new Error('ValidationException'), { $fault: 'client', $metadata: {} });
    expect(errorToHttp(ours).statusCode).toBe(500);
  });

  it('hides everything else behind a bare 500', () => {
    const mapped = errorToHttp(new TypeError('cannot read properties of undefined (secret detail)'));
    expect(mapped).toEqual({ statusCode: 500, body: { error: 'Internal Server Error' }, internal: true });
    expect(JSON.stringify(mapped.body)).not.toContain('secret');
  });
});
