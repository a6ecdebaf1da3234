import { createHash, randomUUID } from 'node:crypto';
import {
  BookingQueuedError,
  ConflictError,
  IdempotencyMismatchError,
  type QueuedBookingRef,
  ValidationError,
} from '../../domain/errors.js';
import {
  abandonIdempotentRequest,
  beginIdempotentRequest,
  completeIdempotentRequest,
  noteQueuedBooking,
} from '../../store/windows.js';
import type { BookingClaims, ClaimsInBooking } from '../booking-claims.js';
import type { APIGatewayProxyResult } from 'aws-lambda';
import type { ServiceMiddleware, ServiceRequest } from '../types.js';
import type { RouteOf } from '../../routes.js';
import { answersRetries } from './verify-signature.js';
import type { AppContext } from '../../context.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * What "the same request" means: method, route, path parameters and the body's exact bytes; for a GET that
 * creates something, its decoded query too (keys sorted: API Gateway doesn't keep their order). A POST's hash
 * leaves the query out, as it always has, so ids stored before stay comparable.
 */
function requestHash(event: ServiceRequest['event']): string {
  const hash = createHash('sha256')
    .update(`${event.httpMethod} ${event.resource} ${JSON.stringify(event.pathParameters ?? {})}\n`)
    .update(event.body ?? '');
  if (event.httpMethod === 'GET') {
    const query = event.multiValueQueryStringParameters ?? {};
    hash.update(
      `\n${JSON.stringify(
        Object.keys(query)
          .sort()
          .map((key) => [key, query[key]]),
      )}`,
    );
  }
  return hash.digest('base64');
}

/**
 * The X-Request-Id that makes this request idempotent: present on a route that answers retries (a POST, a GET
 * that creates something) from a verified caller; a malformed one is a 400.
 */
function presentedRequestId(request: ServiceRequest, routeOf: RouteOf): string | undefined {
  const { event } = request;
  const presented = request.context.svc.headers['x-request-id'];
  if (
    !answersRetries(event.httpMethod, routeOf(event.httpMethod, event.resource)) ||
    presented === undefined ||
    !request.context.svc.auth
  )
    return undefined;
  if (!UUID.test(presented)) throw new ValidationError(['X-Request-Id: must be a UUID']);
  return presented;
}

/**
 * Claims the request's id for this run, or answers for it: the stored response of a completed run, 422 for
 * another request under the same id, 409 while the first run is still going.
 */
async function beginRun(
  ctx: AppContext,
  request: ServiceRequest,
  { routeOf, sealResponse, driveQueuedBooking }: IdempotencyOptions,
): Promise<APIGatewayProxyResult | undefined> {
  const { event } = request;
  const svc = request.context.svc;
  const presented = presentedRequestId(request, routeOf);
  if (presented === undefined || !svc.auth) return;

  const hash = requestHash(event);
  const run = { platformCode: svc.auth.platformCode, requestId: presented, owner: randomUUID(), sealResponse };
  let start = await beginIdempotentRequest(ctx, run, hash, ctx.clock.nowMs());
  if (start.kind === 'in_progress' && start.queued) {
    // The first run left its booking queued behind a hot account: commit the queue as a waiter would, then
    // answer with the outcome (stored with the booking, or the id freed by a refusal and this run starts).
    const { queued } = start;
    // Only a route that books gets here (the request hash holds the route), and each passes the driver
    // (test/infra/bundles.test.ts holds them together); were one to miss it, the retry waits as while queued.
    if (!driveQueuedBooking) throw new BookingQueuedError(queued);
    await driveQueuedBooking(ctx, queued);
    start = await beginIdempotentRequest(ctx, run, hash, ctx.clock.nowMs());
    if (start.kind === 'in_progress') throw new BookingQueuedError(queued);
  }
  switch (start.kind) {
    case 'started':
      svc.idempotentRun = run;
      return;
    case 'completed':
      return { ...start.response, headers: { ...start.response.headers, 'X-Request-Id': svc.requestId } };
    case 'mismatch':
      throw new IdempotencyMismatchError();
    case 'in_progress':
      throw new ConflictError(['X-Request-Id: a request with this id is still in progress']);
  }
}

/**
 * A booking route's X-Request-Id: its record, completed with the answer, goes into the booking's transaction
 * (conditioned on the id being free); should that fail, the run begins apart as `beginRun` begins it, which
 * answers the stored response, 422 or 409 as before.
 */
function carryRecord(
  ctx: AppContext,
  request: ServiceRequest,
  carried: BookingClaims,
  claimsInBooking: ClaimsInBooking,
  options: IdempotencyOptions,
): undefined {
  const { event } = request;
  const svc = request.context.svc;
  const presented = presentedRequestId(request, options.routeOf);
  if (presented === undefined || !svc.auth) return undefined;
  claimsInBooking.carryRecord(ctx, carried, {
    run: { platformCode: svc.auth.platformCode, requestId: presented, owner: randomUUID() },
    requestHash: requestHash(event),
    beginApart: () => beginRun(ctx, request, options),
  });
  return undefined;
}

/** Stores the run's response under its id, unless the booking stored it already. */
async function completeRun(ctx: AppContext, request: ServiceRequest): Promise<void> {
  const run = request.context.svc.idempotentRun;
  if (!run) return;
  // Done either way from here: if storing fails, the id must not be released by onError.
  request.context.svc.idempotentRun = undefined;
  // Usually the booking stored the answer already (then this conditional write does nothing); a use case
  // whose claim's transaction didn't commit (another run completed the work first) has it stored here.
  const { statusCode, headers, body } = request.response!;
  const stored = completeIdempotentRequest(ctx, run, {
    statusCode,
    headers: Object.fromEntries(Object.entries(headers ?? {}).map(([name, value]) => [name, String(value)])),
    body,
  });
  if (!request.context.svc.claimedResponse) {
    await stored;
    return;
  }
  // The booking committed its answer: this write is only a fallback, and its failure must not turn the
  // booked request into an error.
  await stored.catch((error: Error) =>
    ctx.logger.error('idempotent response not stored after its booking', {
      requestId: run.requestId,
      error: error.message,
    }),
  );
}

/** Releases the id of a failed run, so the request can be retried. */
async function releaseRun(ctx: AppContext, request: ServiceRequest): Promise<void> {
  const run = request.context.svc?.idempotentRun;
  // A booking still queued behind a hot account's others keeps the id: it commits (storing its answer)
  // or is refused (freeing the id), and a retry meanwhile commits the queue itself, from the note of where
  // the booking waits. Should the note fail, a retry hears the request is in progress until the next
  // booking of the account commits the queue or the record's lease lapses.
  if (request.error instanceof BookingQueuedError) {
    const { queued } = request.error;
    if (run && queued)
      await noteQueuedBooking(ctx, run, queued).catch((error: Error) =>
        ctx.logger.warn('queued booking not noted on its X-Request-Id', {
          requestId: run.requestId,
          error: error.message,
        }),
      );
    return;
  }
  // Conditioned on the record still being in progress and ours: a booking that committed its answer
  // keeps it, whatever failed afterwards.
  if (!run) return;
  // The request's own error is its answer: a release that fails (DynamoDB throttling past the SDK's
  // retries) must not turn it into a 500. The id then frees itself when its in-progress lease lapses.
  await abandonIdempotentRequest(ctx, run).catch((error: Error) =>
    ctx.logger.warn('X-Request-Id not released after a failed request; it frees itself when its lease lapses', {
      requestId: run.requestId,
      error: error.message,
    }),
  );
}

/**
 * `X-Request-Id` on a POST (or a GET that creates something, a quote) makes it idempotent for 72 hours: the same id and request get
 * the stored first response, byte for byte; the same id with another request gets 422; a duplicate that
 * arrives while the first is still running gets 409. A failed request releases its id so it can be retried,
 * one that ran out of time (503, `lib/runtime/deadline.ts`) included.
 *
 * The use case stores the response itself, in its booking's transaction (the handler hands it the
 * request's claim, see `api-handler.ts`): the booking and its answer commit together. A request that booked
 * nothing through the claim has its response stored here afterwards (conditioned on the run still owning
 * an in-progress record, so a committed answer is never overwritten).
 */
export interface IdempotencyOptions {
  /** The request's route (whether a GET creates something), as the signature middleware reads it. */
  routeOf: RouteOf;
  /** The answer shows a secret once: its stored copy is sealed. */
  sealResponse?: boolean;
  /**
   * The booking engine's `driveQueuedBooking`, passed by the routes that book (their handler's
   * `queuedBookings`). Not imported here: even behind an `import()`, the engine in this module's graph made
   * esbuild keep what the engine uses of the modules every function shares (entities, errors, money) in the
   * chunks each function loads at import, and split those into more chunks: 1 to 7 KiB at import in the
   * functions that never book.
   */
  driveQueuedBooking?: (ctx: AppContext, queued: QueuedBookingRef) => Promise<void>;
  /**
   * The route's booking carries the request's claims (`lib/http/booking-claims.ts`): the X-Request-Id's record
   * is written by the booking's transaction, begun and completed at once, and its run is begun apart (as here
   * otherwise) only when that write fails or the booking would queue. Its code, passed in by the route as
   * `driveQueuedBooking` is: a function that does not book doesn't bundle it.
   */
  claimsInBooking?: ClaimsInBooking;
}

export function idempotency(ctx: AppContext, options: IdempotencyOptions): ServiceMiddleware {
  return {
    before: (request) => {
      const carried = request.context.svc.bookingClaims;
      if (options.claimsInBooking && carried)
        return carryRecord(ctx, request, carried, options.claimsInBooking, options);
      return beginRun(ctx, request, options);
    },
    // Both run in the time the deadline keeps in reserve: a request that ran out of time still stores its answer
    // or frees its id, so a retry is processed rather than told for a minute that the first is in progress.
    after: (request) => ctx.deadlines.cleanup(() => completeRun(ctx, request)),
    onError: (request) => ctx.deadlines.cleanup(() => releaseRun(ctx, request)),
  };
}
