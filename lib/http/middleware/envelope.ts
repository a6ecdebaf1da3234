import { randomUUID } from 'node:crypto';
import { errorToHttp } from '../error-mapper.js';
import type { ServiceMiddleware, ServiceRequest } from '../types.js';

const USABLE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export const JSON_HEADERS = { 'Content-Type': 'application/json' };

/** The request's id: the client's `X-Request-Id` when it is usable, else a new UUID. */
export function requestIdFrom(presented: string | undefined): string {
  return presented && USABLE_REQUEST_ID.test(presented) ? presented : randomUUID();
}

/**
 * An error's one HTTP form, with the request's id; the local server's door answers a refused key with it too.
 * Internal errors are a bare 500.
 */
export function errorResponse(error: unknown, requestId: string) {
  const mapped = errorToHttp(error);
  return {
    statusCode: mapped.statusCode,
    headers: { ...JSON_HEADERS, ...mapped.headers, 'X-Request-Id': requestId },
    body: JSON.stringify(mapped.body),
  };
}

/**
 * Outermost middleware: normalises headers, fixes the request id (the client's `X-Request-Id` or a new
 * UUID), puts it on every response, and maps any error to its one HTTP form. Internal errors are answered
 * with a bare 500; the request log records them with their stack.
 */
export function envelope(): ServiceMiddleware {
  const withRequestId = (request: ServiceRequest) => {
    const response = request.response!;
    response.headers = { ...JSON_HEADERS, ...response.headers, 'X-Request-Id': request.context.svc.requestId };
  };
  return {
    before: (request) => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.event.headers ?? {})) {
        if (value !== undefined) headers[name.toLowerCase()] = value;
      }
      request.context.svc = { requestId: requestIdFrom(headers['x-request-id']), headers };
    },
    after: withRequestId,
    onError: (request) => {
      // An error thrown before `before` ran (not expected) still gets an id.
      request.context.svc ??= { requestId: randomUUID(), headers: {} };
      // Logged once per request, with the outcome, by the request log (`request-log.ts`): an authentication
      // failure's reason and an internal error's stack go on that line.
      request.response = errorResponse(request.error, request.context.svc.requestId);
    },
  };
}
