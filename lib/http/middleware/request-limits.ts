import { PayloadTooLargeError, ValidationError } from '../../domain/errors.js';
import type { ServiceMiddleware } from '../types.js';

/** A body over 1 MiB is refused before anything reads it further. */
export const MAX_BODY_BYTES = 1024 * 1024;
/** JSON nested deeper than this is a 400 (no request of ours needs more than a few levels). */
export const MAX_JSON_DEPTH = 32;

/**
 * How deeply the JSON text nests arrays and objects, counted on the raw text so a hostile body is refused
 * before `JSON.parse` or any recursive walk (schema, logging) sees it. Brackets inside strings don't count.
 * Stops counting once past `limit`.
 */
export function jsonNestingDepth(text: string, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === 0x5c /* \ */) i++;
      else if (char === 0x22 /* " */) inString = false;
    } else if (char === 0x22) inString = true;
    else if (char === 0x7b /* { */ || char === 0x5b /* [ */) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (char === 0x7d /* } */ || char === 0x5d /* ] */) depth--;
  }
  return deepest;
}

/**
 * Size and shape limits on the raw body, checked first: an oversized body costs nothing beyond its length
 * check (not even a signature's HMAC), and an absurdly nested one never reaches the parser.
 */
export function requestLimits(): ServiceMiddleware {
  return {
    before: (request) => {
      const raw = request.event.body;
      if (raw === null || raw === undefined || raw === '') return;
      const bytes = Buffer.byteLength(raw, request.event.isBase64Encoded ? 'base64' : 'utf8');
      if (bytes > MAX_BODY_BYTES) throw new PayloadTooLargeError(MAX_BODY_BYTES);
      const text = request.event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
      if (jsonNestingDepth(text) > MAX_JSON_DEPTH)
        throw new ValidationError([`body: JSON nested deeper than ${MAX_JSON_DEPTH} levels`]);
    },
  };
}
