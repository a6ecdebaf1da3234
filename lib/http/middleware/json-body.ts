import { ValidationError } from '../../domain/errors.js';
import type { ServiceMiddleware } from '../types.js';

/**
 * Parses the JSON body after the signature check (which needs the raw text). The raw body stays on the
 * event; the parsed value goes to the service state. An empty body is no body.
 */
export function jsonBody(): ServiceMiddleware {
  return {
    before: (request) => {
      const raw = request.event.body;
      if (raw === null || raw === undefined || raw.trim() === '') return;
      const text = request.event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
      try {
        request.context.svc.body = JSON.parse(text);
      } catch (error) {
        throw new ValidationError([`body: malformed JSON (${(error as Error).message})`]);
      }
    },
  };
}
