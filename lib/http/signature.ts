import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Request signing as clients do it: HMAC-SHA256 over `timestamp + METHOD + request target + body`, keyed with the
 * base64-decoded API secret, base64 digest.
 */
export function sign(secret: Buffer, timestampSeconds: string, method: string, path: string, body: string): string {
  return createHmac('sha256', secret).update(`${timestampSeconds}${method}${path}${body}`).digest('base64');
}

/**
 * Exactly one base64 HMAC-SHA256 value: 43 base64 characters (the last one carrying only the digest's final
 * bits) and optionally the `=` padding. Anything else (a second value, junk after it, URL-safe letters) is
 * refused before any comparison, because base64 decoding would silently skip it.
 */
const ONE_SIGNATURE = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=?$/;

export function isOneSignature(presented: string): boolean {
  return ONE_SIGNATURE.test(presented);
}

/** Constant-time comparison of two base64 signatures (different lengths never match). */
export function signaturesEqual(expectedBase64: string, presentedBase64: string): boolean {
  const expected = Buffer.from(expectedBase64, 'base64');
  const presented = Buffer.from(presentedBase64, 'base64');
  return expected.length === presented.length && timingSafeEqual(expected, presented);
}

interface SignedRequestParts {
  /** Paths the client may have signed: API Gateway's path, and the stage-prefixed one when there is one. */
  paths: string[];
  /** The query string as sent, in the spellings it may have had (see `queryStringVariants`); empty when none. */
  queries: string[];
  /** The raw body, or for a request without one both `{}` and the empty string. */
  bodies: string[];
}

/**
 * Every text the client may have legitimately signed for this request. The request target is the path plus
 * the query as sent. Only a GET may sign its bare path instead (the spec's `GET /convert_withdraw/rfq`
 * sample does): the weaker form, for reads only; any other method's query is always under the signature.
 */
export function signedTextCandidates(method: string, timestampSeconds: string, parts: SignedRequestParts): string[][] {
  const queries = new Set(parts.queries);
  if (queries.size === 0 || method === 'GET') queries.add('');
  const candidates: string[][] = [];
  for (const path of new Set(parts.paths)) {
    for (const query of queries) {
      for (const body of new Set(parts.bodies)) {
        candidates.push([timestampSeconds, method, query ? `${path}?${query}` : path, body]);
      }
    }
  }
  return candidates;
}

/** Query strings a client may have sent for these parameters, in their order: URI-encoded, and raw. */
export function queryStringVariants(params: Record<string, string[] | undefined> | null | undefined): string[] {
  if (!params) return [];
  const entries = Object.entries(params).flatMap(([key, values]) =>
    (values ?? []).map((value) => [key, value] as const),
  );
  if (entries.length === 0) return [];
  const encoded = entries.map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`).join('&');
  const raw = entries.map(([key, value]) => `${key}=${value}`).join('&');
  return [encoded, raw];
}
