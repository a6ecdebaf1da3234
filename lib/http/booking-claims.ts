import type { APIGatewayProxyResult } from 'aws-lambda';
import type { AppContext } from '../context.js';
import { type ApiKey, apiKeyUnchangedCheck } from '../store/api-keys.js';
import type { TaggedItem } from '../store/table/transaction-items.js';
import { completedRequestItem, type IdempotentRun, type StoredResponse, signatureClaimItem } from '../store/windows.js';

/**
 * A booking route's checks and claims carried by its booking's transaction rather than read or written before
 * it (docs/performance.md, "DynamoDB calls per request"): the key still the one the request was verified
 * against, the signature's replay claim, the X-Request-Id's record with the answer. A warm POST /transfers is
 * then its transaction alone.
 *
 * When one of them fails (a revoked key, a signature or X-Request-Id already claimed), the transaction wrote
 * nothing: the request makes each claim apart, exactly as a route that doesn't book does (the key read again,
 * the signature claimed, the X-Request-Id's run begun), so every refusal is today's, and runs its use case again
 * with the claims already made. When the booking would go to a hot account's queue instead (where only data
 * travels, and the request must hold its claims while it waits), the request makes them apart at that point and
 * its booking queues with the X-Request-Id's completion in their place: its use case, and the reads it made, are
 * not repeated.
 */
export interface BookingClaims {
  /** The transaction items, in order, given the answer the booking stores (the X-Request-Id's record holds it). */
  items: Array<(response: StoredResponse) => TaggedItem>;
  /** Each claim made apart, in order; a response when one answers the request (a completed X-Request-Id's). */
  apart: Array<() => Promise<APIGatewayProxyResult | undefined>>;
  /**
   * Before a refusal by the booking's transaction is answered: the key read now and the request verified
   * against it, so a revoked key hears 403 rather than what its request would have been refused for. (A
   * refusal before the booking makes the claims apart first: `apart`.)
   */
  beforeRefusal: () => Promise<void>;
  /** Set once the use case has put the items in its booking. */
  carried?: boolean;
  /** Set once the claims were made apart for a booking that queues (`ClaimsInBooking.items`). */
  madeApart?: boolean;
  /** The X-Request-Id's run begun apart (`carryRecord`), when the request has one: begun again by `bookingAgain`. */
  beginRecordApart?: () => Promise<APIGatewayProxyResult | undefined>;
}

/**
 * The code that carries a route's claims in its booking, passed in by the routes whose booking carries them (their
 * handler's `claimsInBooking`), as the engine's `driveQueuedBooking` is: the middleware and `api-handler.ts` only
 * name its type, so a function that does not book doesn't bundle it (test/infra/bundles.test.ts).
 */
export interface ClaimsInBooking {
  /** The key's check and the signature's claim (`middleware/verify-signature.ts`), begun for the request. */
  begin(ctx: AppContext, request: SignedRequest): BookingClaims;
  /** The X-Request-Id's record, begun and completed in the booking (`middleware/idempotency.ts`). */
  carryRecord(
    ctx: AppContext,
    carried: BookingClaims,
    record: { run: IdempotentRun; requestHash: string; beginApart: () => Promise<APIGatewayProxyResult | undefined> },
  ): void;
  /**
   * The booking's items for the answer it stores. Should the booking queue, the claims are made apart (once)
   * and it carries `queuedCompletion()` instead: the X-Request-Id's completion for the run begun apart.
   */
  items(carried: BookingClaims, response: StoredResponse, queuedCompletion: () => TaggedItem[]): TaggedItem[];
  /** After the use case threw while its booking was to carry the claims (`api-handler.ts`): how the request goes on. */
  recover(carried: BookingClaims, error: unknown, runAgain: () => Promise<unknown>): Promise<Recovered>;
}

/** What `ClaimsInBooking.begin` is given by the signature's check: the request as verified, and how to verify it again. */
export interface SignedRequest {
  /** The key item the request was verified against (kept up to 5 s for reads). */
  key: ApiKey;
  /** The signature's claim: the key, the signature the request matched, its X-Request-Id. */
  claim: { apiKey: string; signature: string; requestId: string | undefined };
  /** How long from `nowMs` the signature stays claimed. */
  windowMs: (nowMs: number) => number;
  /** Verifies the request again against the key read now; the signature it matched. */
  verifyAgain: () => Promise<string>;
  /** Claims the signature apart, as a route that doesn't book does (a 409 for a replay). */
  claimApart: (signature: string) => Promise<void>;
}

/** The request answered by a claim made apart (a completed X-Request-Id's answer), or its use case's body. */
export type Recovered = { answered: APIGatewayProxyResult } | { body: unknown };

/** A claim of the booking's transaction failed, or the booking would queue: the claims are made apart (`BookingClaims`). */
export class ClaimsApartError extends Error {
  constructor(why: string) {
    super(`booking claims made apart: ${why}`);
    this.name = 'ClaimsApartError';
  }
}

/** A claim made apart for a booking that would queue answered the request (a completed X-Request-Id's answer). */
class AnsweredApartError extends Error {
  constructor(readonly answered: APIGatewayProxyResult) {
    super('a claim made apart answered the request');
    this.name = 'AnsweredApartError';
  }
}

/** A booking item refused by making the claims apart (a claim already taken, a key changed). */
function claimItem(item: TaggedItem['item'], why: string): TaggedItem {
  return { item, onConditionFailed: () => new ClaimsApartError(why) };
}

/** Makes each claim apart, in order, until one answers the request (a completed X-Request-Id's answer): that answer. */
async function makeClaimsApart(carried: BookingClaims): Promise<APIGatewayProxyResult | undefined> {
  for (const claimApart of carried.apart) {
    const answered = await claimApart();
    if (answered) return answered;
  }
  return undefined;
}

/**
 * The claims of a request booking again after a hot account's queue refused its booking for something its use case
 * books again after (a transfer id drawn twice, a party's check that passes when read). They were made apart for
 * the queue: the signature's claim is this request's and stays (made again, it would find itself and answer 409);
 * the refusal freed the X-Request-Id, as a failed request frees it, so its run begins apart again, and its
 * completion goes in this booking, queued or not. Prepared when the engine settles the booking's items, before
 * either path.
 */
function bookingAgain(carried: BookingClaims, queuedCompletion: () => TaggedItem[]): TaggedItem[] {
  const begin = carried.beginRecordApart;
  if (!begin) return [];
  const [placeholder] = queuedCompletion();
  if (!placeholder) return [];
  return [
    {
      // Never sent: `prepare` replaces it with the completion of the run begun again.
      ...placeholder,
      prepare: async () => {
        const answered = await begin();
        if (answered) throw new AnsweredApartError(answered);
        return { items: queuedCompletion(), stale: async () => false };
      },
    },
  ];
}

export const claimsInBooking: ClaimsInBooking = {
  begin: (ctx, { key, claim, windowMs, verifyAgain, claimApart }) => ({
    // The booking's transaction checks the key is still this one and claims the signature. Should either fail
    // (or the booking queue), the request is verified again against the key read now and claims its signature
    // apart, which answers what those answered before they moved: a 403, a 409, the first answer.
    items: [
      () => claimItem(apiKeyUnchangedCheck(ctx, key), 'the API key item changed'),
      () => {
        const nowMs = ctx.clock.nowMs();
        return claimItem(
          signatureClaimItem(ctx, { ...claim, nowMs, windowMs: windowMs(nowMs) }),
          'the signature was claimed already',
        );
      },
    ],
    apart: [
      async () => {
        await claimApart(await verifyAgain());
        return undefined;
      },
    ],
    beforeRefusal: async () => {
      await verifyAgain();
    },
  }),

  // Conditioned on the id being free; should that fail, the run begins apart, which answers the stored response,
  // 422 or 409 as before.
  carryRecord: (ctx, carried, { run, requestHash, beginApart }) => {
    carried.items.push((response) =>
      claimItem(completedRequestItem(ctx, run, requestHash, response, ctx.clock.nowMs()), 'the X-Request-Id was taken'),
    );
    carried.apart.push(beginApart);
    carried.beginRecordApart = beginApart;
  },

  items: (carried, response, queuedCompletion) => {
    if (carried.madeApart) return bookingAgain(carried, queuedCompletion);
    let madeApart: Promise<TaggedItem[]> | undefined;
    // Made apart once for all the items; one that answers the request ends it with that answer.
    const inPlace = () =>
      (madeApart ??= makeClaimsApart(carried).then((answered) => {
        if (answered) throw new AnsweredApartError(answered);
        carried.madeApart = true;
        return queuedCompletion();
      }));
    // The first item stands for them all in the queue; the others leave nothing in their place.
    return carried.items.map((item, index) => ({
      ...item(response),
      queuedInstead: async () => {
        const instead = await inPlace();
        return index === 0 ? instead : [];
      },
    }));
  },

  // Nothing of the booking was written, its claims neither.
  recover: async (carried, error, runAgain) => {
    if (error instanceof AnsweredApartError) return { answered: error.answered };
    // Its claims were made apart for a queue that refused it (or it ran out of time waiting): answered as a
    // request whose claims came before its use case.
    if (carried.madeApart) throw error;
    if (!(error instanceof ClaimsApartError) && carried.carried) {
      // Refused by its booking's transaction (or while booking): it claimed nothing, so the same request may come
      // again; a revoked key hears 403, as it would have from a key read before the use case.
      await carried.beforeRefusal();
      throw error;
    }
    // Refused before it booked (what it found may be the first run's doing: a quote that run executed), or its
    // claims must be made apart: they are, as before the use case they would have been, so a replay hears 409
    // and a retry its first answer. A refusal is then answered; a claim refused, run again.
    const answered = await makeClaimsApart(carried);
    if (answered) return { answered };
    if (!(error instanceof ClaimsApartError)) throw error;
    return { body: await runAgain() };
  },
};
