import { randomUUID } from 'node:crypto';
import { errorToHttp } from '../error-mapper.js';
import type { ServiceMiddleware, ServiceRequest } from '../types.js';

const USABLE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Whether a client's `X-Request-Id` can be the request's id (else the request gets a new UUID). */
export function usableRequestId(presented: string): boolean {
  return USABLE_REQUEST_ID.test(presented);
}

export const JSON_HEADERS = { 'Content-Type': 'application/json' };

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
      const presented = headers['x-request-id'];
      const requestId = presented && usableRequestId(presented) ? presented : randomUUID();
      request.context.svc = { requestId, headers };
    },
    after: withRequestId,
    onError: (request) => {
      // An error thrown before `before` ran (not expected) still gets an id.
      request.context.svc ??= { requestId: randomUUID(), headers: {} };
      const mapped = errorToHttp(request.error);
      // Logged once per request, with the outcome, by the request log (`request-log.ts`): an authentication
      // failure's reason and an internal error's stack go on that line.
      request.response = {
        statusCode: mapped.statusCode,
        headers: mapped.headers ?? {},
        body: JSON.stringify(mapped.body),
      };
      withRequestId(request);
    },
  };
}
