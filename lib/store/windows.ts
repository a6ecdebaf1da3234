import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand, UpdateCommand, type DeleteCommandInput } from '@aws-sdk/lib-dynamodb';
import { clientIdClaimEntity, idempotencyRecordEntity, replayClaimEntity } from './entities/window.js';
import type { ConditionExpressions } from './entity/entity.js';
import { documentItemOf } from './table/returned-item.js';
import { ConflictError, type QueuedBookingRef } from '../domain/errors.js';
import { decryptSecret, encryptSecret } from '../crypto/secret-cipher.js';
import type { TaggedItem, TransactItem } from './table/transaction-items.js';
import type { AppContext } from '../context.js';
import { writtenUnlessConditionFailed } from './table/conditional.js';

/**
 * Claims with a window, in the TTL table. A claim is free when no item exists or when the stored
 * `expires_at_ms` has passed: DynamoDB's TTL deletes late (up to days), so the condition, not the deletion,
 * ends the window.
 */
const HOURS_72_MS = 72 * 60 * 60 * 1000;

const FREE_OR_EXPIRED = 'attribute_not_exists(pk) OR expires_at_ms <= :now';

function windowAttributes(nowMs: number, windowMs: number) {
  const expiresAtMs = nowMs + windowMs;
  return { expires_at_ms: expiresAtMs, ttl: Math.ceil(expiresAtMs / 1000) };
}

/**
 * The transaction item that claims a client id (client_transfer_id, client_trade_id) for 72 hours. It goes
 * into the same TransactWriteItems as the record it protects, so the record and its claim exist together or
 * not at all. The caller tags it with the domain error its failed condition means (the id is taken).
 */
export function clientIdClaim(
  ctx: Pick<AppContext, 'tables'>,
  kind: string,
  platformCode: string,
  clientId: string,
  nowMs: number,
  refersTo: string,
): TransactItem {
  return clientIdClaimEntity.put(
    ctx.tables,
    { refers_to: refersTo, ...windowAttributes(nowMs, HOURS_72_MS) },
    {
      extra: { kind, platform_code: platformCode, client_id: clientId },
      condition: FREE_OR_EXPIRED,
      values: { ':now': nowMs },
    },
  );
}

type SignatureClaim = { fresh: true } | { fresh: false; requestId: string | null };

/**
 * Records an accepted signature with the X-Request-Id it came with. A repeat inside the window is not fresh,
 * and says which X-Request-Id the first carried (a client retrying the very same bytes carries the same).
 */
export async function claimSignature(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  apiKey: string,
  signature: string,
  nowMs: number,
  windowMs: number,
  requestId: string | undefined,
): Promise<SignatureClaim> {
  // This claim's own mark: when the SDK resends the put after its answer was lost, the item it finds is this
  // claim's, and the request is as fresh as it was.
  const claim = randomUUID();
  try {
    const put = signatureClaimItem(ctx, { apiKey, signature, nowMs, windowMs, requestId, claim });
    await ctx.db.send(new PutCommand({ ...put.Put, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }));
    return { fresh: true };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const returned = documentItemOf(error.Item);
    const existing = returned && replayClaimEntity.parse(returned);
    if (existing?.claim === claim) return { fresh: true };
    return { fresh: false, requestId: existing?.request_id ?? null };
  }
}

/**
 * The put that claims a signature for the rest of its window: sent alone by `claimSignature`, or carried by a
 * booking route's transaction (`lib/http/booking-claims.ts`), so a request its transaction refuses leaves no claim.
 */
export function signatureClaimItem(
  ctx: Pick<AppContext, 'tables'>,
  claim: {
    apiKey: string;
    signature: string;
    nowMs: number;
    windowMs: number;
    requestId: string | undefined;
    claim?: string;
  },
): { Put: NonNullable<TransactItem['Put']> } {
  return replayClaimEntity.put(
    ctx.tables,
    {
      claim: claim.claim ?? randomUUID(),
      ...(claim.requestId !== undefined && { request_id: claim.requestId }),
      ...windowAttributes(claim.nowMs, claim.windowMs),
    },
    {
      extra: { api_key: claim.apiKey, signature: claim.signature },
      condition: FREE_OR_EXPIRED,
      values: { ':now': claim.nowMs },
    },
  );
}

export interface StoredResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

type IdempotencyStart =
  | { kind: 'started' }
  | { kind: 'completed'; response: StoredResponse }
  /** `queued`: the run's booking waits in a hot account's queue (its first run answered 503). */
  | { kind: 'in_progress'; queued?: QueuedBookingRef }
  | { kind: 'mismatch' };

/** How long an in-progress record blocks duplicates before a retry may take over (longer than a Lambda run). */
export const IN_PROGRESS_LEASE_MS = 60_000;

/** One run of an idempotent request: its key, and the token that makes the run the record's owner. */
export interface IdempotentRun {
  platformCode: string;
  requestId: string;
  owner: string;
  /**
   * The answer shows a secret once (a webhook signing secret): its copy for retries is stored encrypted like
   * the secret itself (`secret-cipher.ts`), never readable in the table for its 72 hours.
   */
  sealResponse?: boolean;
}

/** The stored form of a sealed answer: this prefix, then the encrypted JSON. */
const SEALED_PREFIX = 'sealed:';

async function storedResponseText(
  ctx: Pick<AppContext, 'kms' | 'config'>,
  run: IdempotentRun,
  response: StoredResponse,
): Promise<string> {
  const text = JSON.stringify(response);
  return run.sealResponse ? `${SEALED_PREFIX}${await encryptSecret(ctx, text)}` : text;
}

async function readStoredResponse(ctx: Pick<AppContext, 'kms' | 'config'>, stored: string): Promise<StoredResponse> {
  const text = stored.startsWith(SEALED_PREFIX) ? await decryptSecret(ctx, stored.slice(SEALED_PREFIX.length)) : stored;
  return JSON.parse(text) as StoredResponse;
}

/**
 * Starts an idempotent request: one conditional put that succeeds when the key is new, expired, or stuck in
 * progress past its lease (a crashed run) with the same request. Otherwise the existing record says what
 * the duplicate gets. The run that starts owns the record (`run.owner`): only it can complete or release it,
 * so a run that outlived its lease can neither book (its completion is part of its booking) nor free the
 * key of the run that took over.
 */
export async function beginIdempotentRequest(
  ctx: Pick<AppContext, 'db' | 'tables' | 'kms' | 'config'>,
  run: IdempotentRun,
  requestHash: string,
  nowMs: number,
): Promise<IdempotencyStart> {
  try {
    const put = idempotencyRecordEntity.put(
      ctx.tables,
      {
        status: 'IN_PROGRESS',
        owner: run.owner,
        request_hash: requestHash,
        in_progress_until_ms: nowMs + IN_PROGRESS_LEASE_MS,
        ...windowAttributes(nowMs, HOURS_72_MS),
      },
      {
        extra: recordParts(run),
        condition: `${FREE_OR_EXPIRED} OR (#status = :inProgress AND in_progress_until_ms <= :now AND request_hash = :hash)`,
        names: { '#status': 'status' },
        values: { ':now': nowMs, ':inProgress': 'IN_PROGRESS', ':hash': requestHash },
      },
    );
    await ctx.db.send(new PutCommand({ ...put.Put, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }));
    return { kind: 'started' };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const returned = documentItemOf(error.Item);
    if (!returned) return { kind: 'in_progress' };
    const existing = idempotencyRecordEntity.parse(returned);
    // The SDK resent this very put after its answer was lost: the record is this run's own.
    if (existing.owner === run.owner) return { kind: 'started' };
    if (existing.request_hash !== requestHash) return { kind: 'mismatch' };
    if (existing.status === 'COMPLETED' && existing.response) {
      return { kind: 'completed', response: await readStoredResponse(ctx, existing.response) };
    }
    const queued = existing.queued_booking;
    return queued ? { kind: 'in_progress', queued: JSON.parse(queued) as QueuedBookingRef } : { kind: 'in_progress' };
  }
}

/** This run no longer owns its request: another run took it over after the lease lapsed, or answered it. */
class RequestTakenOverError extends ConflictError {
  constructor() {
    super(['X-Request-Id: another run of this request took it over; retry to get its answer']);
    this.name = 'RequestTakenOverError';
  }
}

/** The parts of a run's record's key. */
const recordParts = (run: IdempotentRun) => ({ platform_code: run.platformCode, request_id: run.requestId });

/** The condition that a run's record is still in progress and the run's own. */
const ownRecord = (run: IdempotentRun) =>
  ({
    condition: '#status = :inProgress AND #owner = :owner',
    names: { '#status': 'status', '#owner': 'owner' },
    values: { ':inProgress': 'IN_PROGRESS', ':owner': run.owner },
  }) satisfies ConditionExpressions;

const completion = (ctx: Pick<AppContext, 'tables'>, run: IdempotentRun, storedText: string) => {
  const own = ownRecord(run);
  return idempotencyRecordEntity.update(ctx.tables, recordParts(run), {
    update: 'SET #status = :completed, #response = :response REMOVE in_progress_until_ms',
    condition: own.condition,
    names: { ...own.names, '#response': 'response' },
    values: { ...own.values, ':completed': 'COMPLETED', ':response': storedText },
  }).Update;
};

/**
 * The request's claim on what it books: the transaction item that completes its idempotency record with
 * the response, written in the booking's own transaction. The booking and its answer commit together, so
 * a run that dies after committing leaves a retry the stored answer, never a second booking; and a run
 * that lost its record to a takeover can't commit at all.
 */
export function requestCompletionItem(
  ctx: Pick<AppContext, 'tables' | 'kms' | 'config'>,
  run: IdempotentRun,
  response: StoredResponse,
): TaggedItem {
  const onConditionFailed = () => new RequestTakenOverError();
  // A booking refused in a hot account's queue frees the id the way a failed request does (`abandonIdempotentRequest`).
  const release = abandonment(ctx, run);
  if (!run.sealResponse)
    return { item: { Update: completion(ctx, run, JSON.stringify(response)) }, onConditionFailed, release };
  // Encrypting is asynchronous (KMS on AWS): done once, before the transaction's first attempt.
  let sealed: Promise<string> | undefined;
  return {
    // Never sent: `prepare` replaces it before every attempt (transactWrite), once the answer is sealed.
    item: { Update: completion(ctx, run, '') },
    prepare: async () => {
      sealed ??= storedResponseText(ctx, run, response);
      return {
        items: [{ item: { Update: completion(ctx, run, await sealed) }, onConditionFailed, release }],
        stale: async () => false,
      };
    },
  };
}

/**
 * A booking route's X-Request-Id record begun and completed in one write, in the booking's own transaction
 * (`lib/http/booking-claims.ts`): the answer as the record holds it, the id free (or its window over) as its
 * condition. Should the id be taken, the transaction writes nothing and the request begins its run apart
 * (`beginIdempotentRequest`), which answers as before: the stored answer, 422 for another request, 409 while
 * in progress. Not for a sealed answer (its encryption comes first).
 */
export function completedRequestItem(
  ctx: Pick<AppContext, 'tables'>,
  run: IdempotentRun,
  requestHash: string,
  response: StoredResponse,
  nowMs: number,
): TransactItem {
  return idempotencyRecordEntity.put(
    ctx.tables,
    {
      status: 'COMPLETED',
      owner: run.owner,
      request_hash: requestHash,
      response: JSON.stringify(response),
      ...windowAttributes(nowMs, HOURS_72_MS),
    },
    { extra: recordParts(run), condition: FREE_OR_EXPIRED, values: { ':now': nowMs } },
  );
}

/** Stores the response of a run that booked nothing through `requestCompletionItem`; false if it was stored already. */
export async function completeIdempotentRequest(
  ctx: Pick<AppContext, 'db' | 'tables' | 'kms' | 'config'>,
  run: IdempotentRun,
  response: StoredResponse,
): Promise<boolean> {
  const text = await storedResponseText(ctx, run, response);
  return writtenUnlessConditionFailed(ctx.db.send(new UpdateCommand(completion(ctx, run, text))));
}

const abandonment = (ctx: Pick<AppContext, 'tables'>, run: IdempotentRun): DeleteCommandInput =>
  idempotencyRecordEntity.delete(ctx.tables, recordParts(run), ownRecord(run)).Delete;

/** A failed request releases its key, so the client can retry (a retry of a partial run resumes it). Only its owner's, only while in progress. */
export async function abandonIdempotentRequest(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  run: IdempotentRun,
): Promise<void> {
  await writtenUnlessConditionFailed(ctx.db.send(new DeleteCommand(abandonment(ctx, run))));
}

/**
 * Notes on a run's in-progress record where its booking waits (a hot account's queue), so a retry can commit
 * the queue rather than only hear the run is in progress. Only its owner's, only while in progress.
 */
export async function noteQueuedBooking(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  run: IdempotentRun,
  queued: QueuedBookingRef,
): Promise<void> {
  const own = ownRecord(run);
  const update = idempotencyRecordEntity.update(ctx.tables, recordParts(run), {
    update: 'SET queued_booking = :queued',
    condition: own.condition,
    names: own.names,
    values: { ...own.values, ':queued': JSON.stringify(queued) },
  });
  await writtenUnlessConditionFailed(ctx.db.send(new UpdateCommand(update.Update)));
}

/**
 * What a use case includes in its booking transaction so the request is answered by what it booked: the
 * items that store `message` as the response, or nothing when the request is not idempotent.
 */
export type RequestClaim = (message: unknown) => TaggedItem[];
export const NO_REQUEST_CLAIM: RequestClaim = () => [];
