import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Request signing as clients do it: HMAC-SHA256 over `timestamp + METHOD + path + body`, keyed with the
 * base64-decoded API secret, base64 digest.
 */
export function sign(secret: Buffer, timestampSeconds: string, method: string, path: string, body: string): string {
  return createHmac('sha256', secret).update(`${timestampSeconds}${method}${path}${body}`).digest('base64');
}

/** Constant-time comparison of two base64 signatures (different lengths never match). */
export function signaturesEqual(expectedBase64: string, presentedBase64: string): boolean {
  const expected = Buffer.from(expectedBase64, 'base64');
  const presented = Buffer.from(presentedBase64, 'base64');
  return expected.length === presented.length && timingSafeEqual(expected, presented);
}

export interface SignedRequestParts {
  /** Paths the client may have signed: API Gateway's path, and the stage-prefixed one when there is one. */
  paths: string[];
  /** The query string variants: none (the spec's sample), as sent (reference clients). */
  queries: string[];
  /** The raw body, or for a request without one both `{}` and the empty string. */
  bodies: string[];
}

/** Every text the client may have legitimately signed for this request. */
export function signedTextCandidates(method: string, timestampSeconds: string, parts: SignedRequestParts): string[][] {
  const candidates: string[][] = [];
  for (const path of new Set(parts.paths)) {
    for (const query of new Set(['', ...parts.queries])) {
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
  const entries = Object.entries(params).flatMap(([key, values]) => (values ?? []).map((value) => [key, value] as const));
  if (entries.length === 0) return [];
  const encoded = entries.map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`).join('&');
  const raw = entries.map(([key, value]) => `${key}=${value}`).join('&');
  return [encoded, raw];
}
