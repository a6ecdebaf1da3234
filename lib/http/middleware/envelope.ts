import { randomUUID } from 'node:crypto';
import { AuthenticationError } from '../../domain/errors.js';
import type { AppContext } from '../../context.js';
import { errorToHttp } from '../error-mapper.js';
import type { ServiceMiddleware, ServiceRequest } from '../types.js';

const USABLE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export const JSON_HEADERS = { 'Content-Type': 'application/json' };

/**
 * Outermost middleware: normalises headers, fixes the request id (the client's `X-Request-Id` or a new
 * UUID), puts it on every response, and maps any error to its one HTTP form. Internal errors are logged
 * with the request id and answered with a bare 500.
 */
export function envelope(ctx: Pick<AppContext, 'logger'>): ServiceMiddleware {
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
      const requestId = presented && USABLE_REQUEST_ID.test(presented) ? presented : randomUUID();
      request.context.svc = { requestId, headers };
    },
    after: withRequestId,
    onError: (request) => {
      // An error thrown before `before` ran (not expected) still gets an id.
      request.context.svc ??= { requestId: randomUUID(), headers: {} };
      const mapped = errorToHttp(request.error);
      if (request.error instanceof AuthenticationError) {
        // The client hears one message for every authentication failure; ops need to know which it was.
        ctx.logger.warn('authentication failed', {
          requestId: request.context.svc.requestId,
          route: `${request.event.httpMethod} ${request.event.resource}`,
          reason: request.error.reason,
        });
      }
      if (mapped.internal) {
        ctx.logger.error('internal error', {
          requestId: request.context.svc.requestId,
          route: `${request.event.httpMethod} ${request.event.resource}`,
          error: request.error ?? undefined,
        });
      }
      request.response = { statusCode: mapped.statusCode, headers: mapped.headers ?? {}, body: JSON.stringify(mapped.body) };
      withRequestId(request);
    },
  };
}
