import type { APIGatewayProxyEvent } from 'aws-lambda';
import { AuthenticationError, ConflictError, ForbiddenError, RateLimitedError } from '../../domain/errors.js';
import { type ApiKey, apiKeyForRequest, passphraseMatches, secretBytes } from '../../store/api-keys.js';
import type { ClaimsInBooking } from '../booking-claims.js';
import { claimSignature } from '../../store/windows.js';
import type { Route, RouteOf } from '../../routes.js';
import {
  isOneSignature,
  queryStringVariants,
  rawTargetOf,
  sign,
  signaturesEqual,
  signedTextCandidates,
} from '../signature.js';
import type { ServiceMiddleware } from '../types.js';
import type { AppContext } from '../../context.js';

export const SIGNATURE_WINDOW_SECONDS = 60;
const REQUIRED_HEADERS = ['x-svc-api-key', 'x-svc-signed', 'x-svc-timestamp', 'x-svc-passphrase'] as const;
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Verifies the four X-SVC-* headers against the raw body, before anything parses it,
 * and checks the key's permission for the route's area. Every authentication failure answers the same 403
 * (`AuthenticationError`); what exactly failed goes to the log only. A mutating request's signature is remembered for
 * the life of its timestamp window: sending it again does nothing again.
 */
export function verifySignature(ctx: AppContext, options: VerifySignatureOptions): ServiceMiddleware {
  return {
    before: async (request) => {
      const { event } = request;
      const route = options.routeOf(event.httpMethod, event.resource);
      if (route && route.area === null) return;
      const svc = request.context.svc;
      const headers = signatureHeaders(svc.headers, ctx.clock.nowSeconds());

      // A key this process already refused in its current window is refused again at once: a flood past the
      // limit costs no read, no HMAC and no count.
      const full = ctx.rateLimiter.knownFull(headers.apiKey, ctx.clock.nowMs());
      if (full) throw new RateLimitedError(full.retryAfterSeconds, full.policy, full.remaining);

      // A route that writes nothing may be verified against a key item read up to 5 s ago, and so may a route
      // whose booking checks the key in its own transaction (`claimsInBooking`); anything else reads it now. Either
      // way a revoked key writes nothing from the moment of revocation. Passphrase and signature are checked on
      // every request.
      const inBooking =
        route !== undefined && !SAFE_METHODS.has(event.httpMethod) ? options.claimsInBooking : undefined;
      const safe =
        (route !== undefined && SAFE_METHODS.has(event.httpMethod) && !route.writes) || inBooking !== undefined;
      const { key, matched } = await verifiedKey(ctx, event, headers, safe);

      // The key is proven: its rate limit is checked before anything is written (the
      // replay claim below, idempotency, the use case), so a refused request does no work.
      const limit = key.rate_limit ?? { rps: ctx.config.RATE_LIMIT_RPS, burst: ctx.config.RATE_LIMIT_BURST };
      const admission = await ctx.rateLimiter.admit(headers.apiKey, limit, ctx.clock.nowMs());
      if (!admission.admitted)
        throw new RateLimitedError(
          admission.refusal.retryAfterSeconds,
          admission.refusal.policy,
          admission.refusal.remaining,
        );

      if (!route || !route.area || !key.permissions.includes(route.area)) {
        throw new ForbiddenError(`API key lacks the '${route?.area ?? 'unknown'}' permission`);
      }
      const requestId = svc.headers['x-request-id'];
      const idempotent = answersRetries(event.httpMethod, route);
      if (inBooking) {
        // The booking's transaction checks the key and claims the signature (`booking-claims.ts`); should either
        // fail, or the booking queue, the request is verified again against the key read now and claims its
        // signature apart.
        svc.bookingClaims = inBooking.begin(ctx, {
          key,
          claim: { apiKey: headers.apiKey, signature: matched, requestId },
          windowMs: (nowMs) => signatureWindowMs(headers, nowMs),
          verifyAgain: async () => (await verifiedKey(ctx, event, headers, false)).matched,
          claimApart: (signature) => claimOnce(ctx, idempotent, headers, signature, requestId),
        });
      } else if (!SAFE_METHODS.has(event.httpMethod) || route.writes) {
        // A GET that creates something (a quote) is claimed like a POST: it may be signed over its bare path, so
        // its headers sent again with another query must not make a second one.
        await claimOnce(ctx, idempotent, headers, matched, requestId);
      }

      svc.auth = {
        platformCode: key.platform_code,
        participantCode: key.platform_code,
        apiKey: headers.apiKey,
        permissions: key.permissions,
      };
    },
  };
}

export interface VerifySignatureOptions {
  /** The request's route (its permission area, whether a GET writes): the function's own, or the table's. */
  routeOf: RouteOf;
  /**
   * The route's booking carries the key's check (and the request's claims) in its own transaction
   * (`lib/http/booking-claims.ts`, its code passed in by the route): the request is verified against the key item
   * kept for reads.
   */
  claimsInBooking?: ClaimsInBooking;
}

/**
 * The key item (kept up to 5 s when `safe`, else read now) and the signature the request matched; every
 * authentication failure a 403 whose reason goes to the log.
 */
async function verifiedKey(
  ctx: AppContext,
  event: APIGatewayProxyEvent,
  headers: SignatureHeaders,
  safe: boolean,
): Promise<{ key: ApiKey; matched: string }> {
  const key = await apiKeyForRequest(ctx, headers.apiKey, safe);
  if (!key) throw new AuthenticationError('unknown API key');
  if (key.revoked_at !== undefined) throw new AuthenticationError('API key has been revoked');
  if (!passphraseMatches(key, headers.passphrase)) throw new AuthenticationError('invalid passphrase');
  return { key, matched: matchingSignature(event, headers, await secretBytes(ctx, key)) };
}

/**
 * Whether a repeat with the first request's X-Request-Id is answered by idempotency (`idempotency.ts`): a POST,
 * and a GET that creates something.
 */
export function answersRetries(method: string, route: Route | undefined): boolean {
  return method === 'POST' || (method === 'GET' && route?.writes === true);
}

interface SignatureHeaders {
  apiKey: string;
  presented: string;
  timestamp: string;
  passphrase: string;
}

/** The four headers, present, with a timestamp inside the window and exactly one signature; else 403. */
export function signatureHeaders(headers: Record<string, string | undefined>, nowSeconds: number): SignatureHeaders {
  const missing = REQUIRED_HEADERS.filter((name) => !headers[name]);
  if (missing.length) throw new AuthenticationError(`missing headers: ${missing.join(', ')}`);
  const timestamp = headers['x-svc-timestamp']!;
  if (!/^\d{1,12}$/.test(timestamp)) throw new AuthenticationError('X-SVC-TIMESTAMP is not UNIX time in seconds');
  if (Math.abs(nowSeconds - Number(timestamp)) > SIGNATURE_WINDOW_SECONDS) {
    throw new AuthenticationError(`X-SVC-TIMESTAMP is more than ${SIGNATURE_WINDOW_SECONDS} seconds from server time`);
  }
  const presented = headers['x-svc-signed']!;
  if (!isOneSignature(presented))
    throw new AuthenticationError('X-SVC-SIGNED is not exactly one base64 HMAC-SHA256 value');
  return { apiKey: headers['x-svc-api-key']!, presented, timestamp, passphrase: headers['x-svc-passphrase']! };
}

/** The signature, as computed here, of the variant of the request the client signed; else 403. */
function matchingSignature(event: APIGatewayProxyEvent, headers: SignatureHeaders, secret: Buffer): string {
  const rawBody = event.body ?? '';
  const candidates = signedTextCandidates(event.httpMethod, headers.timestamp, {
    paths: [event.path, event.requestContext?.path].filter((path): path is string => Boolean(path)),
    queries: queryStringVariants(event.multiValueQueryStringParameters),
    exactTargets: [rawTargetOf(event)].filter((target): target is string => target !== undefined),
    bodies: rawBody === '' ? ['{}', ''] : [rawBody],
  });
  // Check every candidate so timing does not reveal which variant matched.
  let matched: string | undefined;
  for (const [ts, method, path, body] of candidates) {
    const expected = sign(secret, ts!, method!, path!, body!);
    if (signaturesEqual(expected, headers.presented)) matched = expected;
  }
  if (matched === undefined) throw new AuthenticationError('signature does not match the request');
  return matched;
}

/** How long from `nowMs` a signature stays claimed: the rest of its timestamp's window (at least a second). */
function signatureWindowMs(headers: SignatureHeaders, nowMs: number): number {
  const windowEndsMs = (Number(headers.timestamp) + SIGNATURE_WINDOW_SECONDS + 1) * 1000;
  return Math.max(1000, windowEndsMs - nowMs);
}

/**
 * A mutating request's signature is claimed for the rest of its timestamp window. A repeat of a genuine
 * signature is a duplicate, not an attack: nothing it asks is done again. A client retrying the very same
 * bytes with its X-Request-Id gets the first answer from idempotency (a POST's); anything else is told the
 * request was already received (409).
 */
async function claimOnce(
  ctx: AppContext,
  idempotent: boolean,
  headers: SignatureHeaders,
  matched: string,
  requestId: string | undefined,
): Promise<void> {
  const nowMs = ctx.clock.nowMs();
  // Keyed by the signature we computed, not the header's text: base64 decoding forgives missing or
  // extra padding and URL-safe letters, so one signature has many spellings.
  const claim = await claimSignature(ctx, headers.apiKey, matched, nowMs, signatureWindowMs(headers, nowMs), requestId);
  const retry = !claim.fresh && idempotent && requestId !== undefined && claim.requestId === requestId;
  if (!claim.fresh && !retry) {
    throw new ConflictError([
      'request already received: a request with this signature was accepted already; send the same X-Request-Id to get its answer, or sign a new request with a new timestamp',
    ]);
  }
}
