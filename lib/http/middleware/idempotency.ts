import { createHash } from 'node:crypto';
import { clock } from '../../clock.js';
import { ConflictError, IdempotencyMismatchError, ValidationError } from '../../domain/errors.js';
import { abandonIdempotentRequest, beginIdempotentRequest, completeIdempotentRequest } from '../../store/windows.js';
import type { ServiceMiddleware } from '../types.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `X-Request-Id` on a POST makes it idempotent for 72 hours (design section 3): the same id and request get
 * the stored first response, byte for byte; the same id with another request gets 422; a duplicate that
 * arrives while the first is still running gets 409. A failed request releases its id so it can be retried.
 */
export function idempotency(): ServiceMiddleware {
  return {
    before: async (request) => {
      const { event } = request;
      const svc = request.context.svc;
      const presented = svc.headers['x-request-id'];
      if (event.httpMethod !== 'POST' || presented === undefined || !svc.auth) return;
      if (!UUID.test(presented)) throw new ValidationError(['X-Request-Id: must be a UUID']);

      const hash = createHash('sha256')
        .update(`${event.httpMethod} ${event.resource} ${JSON.stringify(event.pathParameters ?? {})}\n`)
        .update(event.body ?? '')
        .digest('base64');
      const key = { platformCode: svc.auth.platformCode, requestId: presented };
      const start = await beginIdempotentRequest(key.platformCode, key.requestId, hash, clock.nowMs());
      switch (start.kind) {
        case 'started':
          svc.idempotencyKey = key;
          return;
        case 'completed':
          return { ...start.response, headers: { ...start.response.headers, 'X-Request-Id': svc.requestId } };
        case 'mismatch':
          throw new IdempotencyMismatchError();
        case 'in_progress':
          throw new ConflictError(['X-Request-Id: a request with this id is still in progress']);
      }
    },
    after: async (request) => {
      const key = request.context.svc.idempotencyKey;
      if (!key) return;
      const { statusCode, headers, body } = request.response!;
      // The use case has committed by now: if storing its response fails, the id must not be released
      // (onError would), or the client's retry would book again. The in-progress record then holds the id
      // for its lease instead.
      request.context.svc.idempotencyKey = undefined;
      await completeIdempotentRequest(key.platformCode, key.requestId, {
        statusCode,
        headers: Object.fromEntries(Object.entries(headers ?? {}).map(([name, value]) => [name, String(value)])),
        body,
      });
    },
    onError: async (request) => {
      const key = request.context.svc?.idempotencyKey;
      if (key) await abandonIdempotentRequest(key.platformCode, key.requestId);
    },
  };
}
