import {
  ConflictError,
  ForbiddenError,
  IdempotencyMismatchError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitedError,
  ServiceUnavailableError,
  ValidationError,
} from '../domain/errors.js';

interface HttpResult {
  statusCode: number;
  headers?: Record<string, string>;
  body: unknown;
}

/**
 * A dependency slowing us down (DynamoDB or Step Functions throttling) or not answering in time (the SDK
 * clients' request timeouts): the client may retry, so these are a 503, not a 500.
 */
const THROTTLING: ReadonlySet<string> = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'TransactionConflictException',
  'TimeoutError',
]);

/**
 * An AWS service's own fault (DynamoDB's InternalServerError, a 5xx the SDK retried and gave up on; DynamoDB
 * Local's lock timeout under load is one): the dependency failed, not our code, and AWS documents these as
 * worth a retry. A 503 with Retry-After like throttling, logged as internal so ops see it.
 */
function isDependencyFault(error: unknown): boolean {
  const fault = error as { $fault?: unknown; $metadata?: unknown } | null;
  return fault?.$fault === 'server' && fault.$metadata !== undefined;
}

/**
 * The one mapping from errors to HTTP. Only the closed set of domain errors reaches clients with its
 * message; anything else is a bare 500 (and is logged with the request id by the caller).
 */
export function errorToHttp(error: unknown): HttpResult & { internal: boolean } {
  if (error instanceof ValidationError) return { statusCode: 400, body: { errors: error.errors }, internal: false };
  if (error instanceof ForbiddenError)
    return { statusCode: 403, body: { error: true, message: error.message }, internal: false };
  if (error instanceof NotFoundError) return { statusCode: 404, body: { error: error.message }, internal: false };
  if (error instanceof PayloadTooLargeError)
    return { statusCode: 413, body: { errors: [error.message] }, internal: false };
  if (error instanceof ConflictError) return { statusCode: 409, body: { errors: error.errors }, internal: false };
  if (error instanceof IdempotencyMismatchError)
    return { statusCode: 422, body: { errors: error.errors }, internal: false };
  if (error instanceof RateLimitedError) {
    return {
      statusCode: 429,
      headers: {
        'Retry-After': String(error.retryAfterSeconds),
        'RateLimit-Policy': error.policy,
        RateLimit: error.remaining,
      },
      body: { errors: [error.message] },
      internal: false,
    };
  }
  if (error instanceof ServiceUnavailableError) {
    return {
      statusCode: 503,
      headers: { 'Retry-After': String(error.retryAfterSeconds) },
      body: { errors: [error.message] },
      internal: false,
    };
  }
  const name = (error as { name?: string } | null)?.name;
  if ((name && THROTTLING.has(name)) || isDependencyFault(error)) {
    return {
      statusCode: 503,
      headers: { 'Retry-After': '1' },
      body: { errors: ['service busy, retry shortly'] },
      internal: true,
    };
  }
  return { statusCode: 500, body: { error: 'Internal Server Error' }, internal: true };
}
