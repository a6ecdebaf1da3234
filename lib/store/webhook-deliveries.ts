import { randomInt } from 'node:crypto';
import { PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { AppContext } from '../context.js';
import { EVENT_RETENTION_MS } from '../domain/events.js';
import { DUE_SHARDS, eventIdOfKey } from './events.js';
import { keys } from './keys.js';
import { readInteger, readOptionalInteger } from './table/integers.js';
import type { ListIndex } from './table/paging.js';
import { transactWrite } from './table/transactions.js';
import { writtenUnlessConditionFailed } from './table/conditional.js';

/**
 * Deliveries: one per (event, endpoint), created by the dispatcher with a conditional put (a redelivered
 * stream batch creates nothing twice), then tried until it succeeds, is refused for good, or runs out of
 * retries. Each try is claimed first with a conditional update, so two workers holding the same queue
 * message never send one attempt twice. While work is outstanding the delivery sits in the due index at
 * the time the sweep should look at it (a queued first try that got lost, a retry beyond the queue's delay,
 * a worker that died holding the lease).
 *
 * States: pending -> in_flight -> succeeded | scheduled (-> in_flight ...) | failed.
 */
type DeliveryState = 'pending' | 'in_flight' | 'scheduled' | 'succeeded' | 'failed';

export interface Delivery {
  event_id: string;
  endpoint_id: string;
  platform_code: string;
  state: DeliveryState;
  /** Attempts made over the delivery's life (attempt items are numbered by it). */
  attempts: number;
  /** Attempts since the last (re)delivery request: the retry schedule is followed from here. */
  round_attempts: number;
  next_attempt_at: number | null;
  lease_until: number | null;
  failure_reason: string | null;
  created_at: number;
}

/** A claimed attempt: its number and how many attempts this round has made before it. */
export interface ClaimedAttempt {
  delivery: Delivery;
  attempt: number;
}

/** If the sweep finds a first try still pending this long after it was queued, the queue lost it. */
export const QUEUED_GRACE_MS = 60_000;

function deliveryFrom(item: Record<string, any>): Delivery {
  return {
    event_id: item.event_id,
    endpoint_id: item.endpoint_id,
    platform_code: item.platform_code,
    state: item.state,
    attempts: readInteger(item.attempts),
    round_attempts: readInteger(item.round_attempts),
    next_attempt_at: readOptionalInteger(item.next_attempt_at),
    lease_until: readOptionalInteger(item.lease_until),
    failure_reason: item.failure_reason ?? null,
    created_at: readInteger(item.created_at),
  };
}

const dueShard = () => keys.webhooksDue(randomInt(DUE_SHARDS));
const dueKey = (eventId: string, endpointId: string, atMs: number) =>
  keys.webhooksDueSortKey(atMs, `DELIVERY#${eventId}#${endpointId}`);

/** Creates the delivery unless it exists; true when this call created it (and should queue it). */
export async function createDelivery(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  eventId: string,
  endpointId: string,
  platformCode: string,
  nowMs: number,
): Promise<boolean> {
  const expiresAtMs = nowMs + EVENT_RETENTION_MS;
  return writtenUnlessConditionFailed(
    ctx.db.send(
      new PutCommand({
        TableName: ctx.tables.main,
        Item: {
          ...keys.webhookDelivery(eventId, endpointId),
          type: 'webhook_delivery',
          event_id: eventId,
          endpoint_id: endpointId,
          platform_code: platformCode,
          state: 'pending',
          attempts: 0,
          round_attempts: 0,
          next_attempt_at: nowMs,
          created_at: nowMs,
          expires_at_ms: expiresAtMs,
          ttl: Math.ceil(expiresAtMs / 1000),
          gsi3pk: dueShard(),
          gsi3sk: dueKey(eventId, endpointId, nowMs + QUEUED_GRACE_MS),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    ),
  );
}

/**
 * A new round for a delivery that finished (succeeded or failed) or never existed: redelivery keeps the
 * event id, so the receiver sees the same `webhook-id`. A delivery still in progress is left alone (it is
 * being delivered already). True when a round was started (and should be queued).
 */
export async function restartDelivery(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  eventId: string,
  endpointId: string,
  platformCode: string,
  nowMs: number,
): Promise<boolean> {
  if (await createDelivery(ctx, eventId, endpointId, platformCode, nowMs)) return true;
  return writtenUnlessConditionFailed(
    ctx.db.send(
      new UpdateCommand({
        TableName: ctx.tables.main,
        Key: keys.webhookDelivery(eventId, endpointId),
        UpdateExpression:
          'SET #state = :pending, round_attempts = :zero, next_attempt_at = :now, gsi3pk = :duepk, gsi3sk = :duesk REMOVE failure_reason, lease_until',
        ConditionExpression: '#state IN (:succeeded, :failed)',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: {
          ':pending': 'pending',
          ':zero': 0,
          ':now': nowMs,
          ':duepk': dueShard(),
          ':duesk': dueKey(eventId, endpointId, nowMs + QUEUED_GRACE_MS),
          ':succeeded': 'succeeded',
          ':failed': 'failed',
        },
      }),
    ),
  );
}

/**
 * Claims the next attempt: only a delivery waiting for its due time (or one whose worker's lease ran out)
 * can be claimed, and only by one caller. While in flight it sits in the due index at the lease's end, so a
 * worker that dies mid-send is retried by the sweep.
 */
export async function claimAttempt(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  eventId: string,
  endpointId: string,
  nowMs: number,
  leaseMs: number,
): Promise<ClaimedAttempt | undefined> {
  try {
    const out = await ctx.db.send(
      new UpdateCommand({
        TableName: ctx.tables.main,
        Key: keys.webhookDelivery(eventId, endpointId),
        UpdateExpression:
          'SET #state = :inflight, attempts = attempts + :one, round_attempts = round_attempts + :one, lease_until = :lease, gsi3pk = :duepk, gsi3sk = :duesk',
        ConditionExpression:
          '(#state IN (:pending, :scheduled) AND next_attempt_at <= :now) OR (#state = :inflight AND lease_until <= :now)',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: {
          ':inflight': 'in_flight',
          ':pending': 'pending',
          ':scheduled': 'scheduled',
          ':one': 1,
          ':now': nowMs,
          ':lease': nowMs + leaseMs,
          ':duepk': dueShard(),
          ':duesk': dueKey(eventId, endpointId, nowMs + leaseMs),
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    const delivery = deliveryFrom(out.Attributes!);
    return { delivery, attempt: delivery.attempts };
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
}

export interface AttemptRecord {
  attempted_at: number;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  outcome: 'succeeded' | 'failed' | 'gone' | 'refused' | 'endpoint_unavailable';
  /** When the delivery will be tried again; null when it won't. */
  next_retry_at: number | null;
}

type AttemptEnd =
  | { state: 'succeeded' }
  /** `dueAtMs`: when the sweep should pick it up if nothing else has. */
  | { state: 'scheduled'; nextAttemptAtMs: number; dueAtMs: number }
  | { state: 'failed'; reason: string };

/**
 * Records the claimed attempt and moves the delivery on, in one transaction conditioned on the claim still
 * being ours (attempt number and in_flight), so a worker whose lease ran out can't overwrite a newer try.
 */
export async function finishAttempt(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  claimed: ClaimedAttempt,
  record: AttemptRecord,
  end: AttemptEnd,
): Promise<boolean> {
  const { delivery, attempt } = claimed;
  const expiresAtMs = record.attempted_at + EVENT_RETENTION_MS;
  const values: Record<string, unknown> = { ':inflight': 'in_flight', ':attempt': attempt, ':state': end.state };
  let update = 'SET #state = :state REMOVE lease_until';
  if (end.state === 'scheduled') {
    update = 'SET #state = :state, next_attempt_at = :next, gsi3pk = :duepk, gsi3sk = :duesk REMOVE lease_until';
    Object.assign(values, {
      ':next': end.nextAttemptAtMs,
      ':duepk': dueShard(),
      ':duesk': dueKey(delivery.event_id, delivery.endpoint_id, end.dueAtMs),
    });
  } else if (end.state === 'failed') {
    update = 'SET #state = :state, failure_reason = :reason REMOVE lease_until, next_attempt_at, gsi3pk, gsi3sk';
    values[':reason'] = end.reason;
  } else {
    update = 'SET #state = :state REMOVE lease_until, next_attempt_at, gsi3pk, gsi3sk';
  }
  try {
    await transactWrite(ctx, [
      {
        item: {
          Update: {
            TableName: ctx.tables.main,
            Key: keys.webhookDelivery(delivery.event_id, delivery.endpoint_id),
            UpdateExpression: update,
            ConditionExpression: '#state = :inflight AND attempts = :attempt',
            ExpressionAttributeNames: { '#state': 'state' },
            ExpressionAttributeValues: values,
          },
        },
        onConditionFailed: () => new LostClaimError(),
      },
      {
        item: {
          Put: {
            TableName: ctx.tables.main,
            Item: {
              ...keys.webhookAttempt(delivery.event_id, delivery.endpoint_id, attempt),
              type: 'webhook_attempt',
              event_id: delivery.event_id,
              endpoint_id: delivery.endpoint_id,
              attempt,
              ...record,
              expires_at_ms: expiresAtMs,
              ttl: Math.ceil(expiresAtMs / 1000),
              gsi1pk: keys.attemptsOfEndpoint(delivery.endpoint_id),
              gsi1sk: keys.attemptSortKey(record.attempted_at, delivery.event_id, attempt),
            },
          },
        },
      },
    ]);
    return true;
  } catch (error) {
    if (error instanceof LostClaimError) return false;
    throw error;
  }
}

class LostClaimError extends Error {
  constructor() {
    super('delivery claim lost');
    this.name = 'LostClaimError';
  }
}

interface StoredAttempt extends AttemptRecord {
  event_id: string;
  attempt: number;
}

/** An endpoint's attempts of the last 30 days as a list, oldest first. */
export function attemptsIndex(ctx: Pick<AppContext, 'clock'>, endpointId: string): ListIndex {
  return {
    indexName: 'gsi1',
    partition: { attribute: 'gsi1pk', value: keys.attemptsOfEndpoint(endpointId) },
    sortAttribute: 'gsi1sk',
    sortRange: { between: [keys.attemptSortKey(ctx.clock.nowMs() - EVENT_RETENTION_MS, '', 0), '~'] },
    descending: false,
  };
}

export function attemptFrom(item: Record<string, any>): StoredAttempt {
  return {
    event_id: item.event_id,
    attempt: readInteger(item.attempt),
    attempted_at: readInteger(item.attempted_at),
    status_code: readOptionalInteger(item.status_code),
    latency_ms: readInteger(item.latency_ms),
    error: item.error ?? null,
    outcome: item.outcome,
    next_retry_at: readOptionalInteger(item.next_retry_at),
  };
}

/** What the sweep finds due: undispatched events and deliveries whose next step is late. */
type DueWork = { kind: 'event'; eventId: string } | { kind: 'delivery'; eventId: string; endpointId: string };

export async function dueWork(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  nowMs: number,
  limitPerShard: number,
): Promise<DueWork[]> {
  const upTo = keys.webhooksDueSortKey(nowMs, '~');
  const shards = await Promise.all(
    Array.from({ length: DUE_SHARDS }, (_, shard) =>
      ctx.db.send(
        new QueryCommand({
          TableName: ctx.tables.main,
          IndexName: 'gsi3',
          KeyConditionExpression: 'gsi3pk = :pk AND gsi3sk <= :upTo',
          ExpressionAttributeValues: { ':pk': keys.webhooksDue(shard), ':upTo': upTo },
          Limit: limitPerShard,
        }),
      ),
    ),
  );
  return shards.flatMap((out) =>
    (out.Items ?? []).map(
      (item): DueWork =>
        item.type === 'event'
          ? { kind: 'event', eventId: item.event_id ?? eventIdOfKey(item.pk) }
          : { kind: 'delivery', eventId: item.event_id, endpointId: item.endpoint_id },
    ),
  );
}
