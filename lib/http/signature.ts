import { createHmac, timingSafeEqual } from 'node:crypto';
import type { APIGatewayProxyEvent } from 'aws-lambda';

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
  /** The query string rebuilt from the decoded parameters, in the spellings it may have had (see `queryStringVariants`); empty when none. */
  queries: string[];
  /**
   * The request target exactly as received (path and raw query bytes), where the event carries it: the local
   * server's events do; API Gateway's REST events don't (see `rawTargetOf`).
   */
  exactTargets?: string[];
  /** The raw body, or for a request without one both `{}` and the empty string. */
  bodies: string[];
}

/**
 * Every text the client may have legitimately signed for this request. The request target is the path plus
 * the query as sent: the exact bytes where they reached us, else the query rebuilt in the encodings clients
 * use. Only a GET may sign its bare path instead (the spec's `GET /convert_withdraw/rfq` sample does); a GET
 * that creates something is claimed like a POST, so whoever replays such a signature with another query gets
 * nothing new (`verify-signature.ts`). Any other method's query is always under the signature.
 */
export function signedTextCandidates(method: string, timestampSeconds: string, parts: SignedRequestParts): string[][] {
  const queries = new Set(parts.queries);
  if (queries.size === 0 || method === 'GET') queries.add('');
  const targets = new Set<string>();
  for (const path of new Set(parts.paths)) {
    for (const query of queries) targets.add(query ? `${path}?${query}` : path);
  }
  for (const target of parts.exactTargets ?? []) targets.add(target);
  const candidates: string[][] = [];
  for (const target of targets) {
    for (const body of new Set(parts.bodies)) candidates.push([timestampSeconds, method, target, body]);
  }
  return candidates;
}

const percent = (character: string) => `%${character.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`;

/**
 * How common clients encode a query's keys and values, each a variant of `encodeURIComponent`: as is (JavaScript),
 * RFC 3986 strict (`!'()*` encoded too: Python's `quote`, OkHttp), and the form encodings with `+` for a space
 * (WHATWG `URLSearchParams` and Java's `URLEncoder`, which also encode `~`; Python's `urlencode` and Go's
 * `url.Values`, which encode `*` instead).
 */
const QUERY_ENCODERS: readonly ((value: string) => string)[] = [
  encodeURIComponent,
  (value) => encodeURIComponent(value).replace(/[!'()*]/g, percent),
  (value) =>
    encodeURIComponent(value)
      .replace(/%20/g, '+')
      .replace(/[!'()~]/g, percent),
  (value) =>
    encodeURIComponent(value)
      .replace(/%20/g, '+')
      .replace(/[!'()*]/g, percent),
];

/** A value a client may have sent unencoded: nothing in it that would change how the query splits or decodes. */
const RAW_SAFE = /^[^&=#%]*$/;

/**
 * Query strings a client may have sent for these decoded parameters, in their order: in each encoding of
 * `QUERY_ENCODERS`, and raw when nothing in it needs encoding to keep its meaning. Every variant decodes back
 * to the same parameters, so a signature over any of them covers what the handler reads.
 */
export function queryStringVariants(params: Record<string, string[] | undefined> | null | undefined): string[] {
  if (!params) return [];
  const entries = Object.entries(params).flatMap(([key, values]) =>
    (values ?? []).map((value) => [key, value] as const),
  );
  if (entries.length === 0) return [];
  const variants = new Set(
    QUERY_ENCODERS.map((encode) => entries.map(([key, value]) => `${encode(key)}=${encode(value)}`).join('&')),
  );
  if (entries.every(([key, value]) => RAW_SAFE.test(key) && RAW_SAFE.test(value)))
    variants.add(entries.map(([key, value]) => `${key}=${value}`).join('&'));
  return [...variants];
}

/**
 * A REST event that also says what exactly was requested, under the names API Gateway's HTTP API (payload 2.0)
 * events use. API Gateway's REST events carry only the decoded parameters (and not their order), so on AWS these
 * are absent and the signature check rebuilds the query instead (`queryStringVariants`); the local server,
 * which has the bytes, sets them. API Gateway builds the event itself, so a client can't supply them.
 */
export type ExactTargetEvent = APIGatewayProxyEvent & { rawPath?: string; rawQueryString?: string };

/** The target as received (`/accounts?account_owner=%2A`), where the event carries it; else undefined. */
export function rawTargetOf(event: APIGatewayProxyEvent): string | undefined {
  const { rawPath, rawQueryString } = event as ExactTargetEvent;
  if (typeof rawPath !== 'string') return undefined;
  return typeof rawQueryString === 'string' && rawQueryString !== '' ? `${rawPath}?${rawQueryString}` : rawPath;
}
