import { randomInt } from 'node:crypto';
import { PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { AppContext } from '../context.js';
import { EVENT_RETENTION_MS } from '../domain/events.js';
import { DUE_SHARDS, eventEntity, eventIdOfKey } from './entities/event.js';
import {
  webhookAttemptEntity,
  webhookDeliveryEntity,
  type WebhookAttempt,
  type WebhookDelivery,
} from './entities/webhook.js';
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
export interface Delivery {
  event_id: string;
  endpoint_id: string;
  platform_code: string;
  state: WebhookDelivery['state'];
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

/** A stored delivery, parsed; what it lacks (no next attempt, no lease, no failure) as null. */
function deliveryFrom(item: Readonly<Record<string, unknown>>): Delivery {
  const stored = webhookDeliveryEntity.parse(item);
  return {
    event_id: stored.event_id,
    endpoint_id: stored.endpoint_id,
    platform_code: stored.platform_code,
    state: stored.state,
    attempts: stored.attempts,
    round_attempts: stored.round_attempts,
    next_attempt_at: stored.next_attempt_at ?? null,
    lease_until: stored.lease_until ?? null,
    failure_reason: stored.failure_reason ?? null,
    created_at: stored.created_at,
  };
}

/** The delivery's place in the due index at `atMs`, on a shard drawn at random. */
const dueEntry = (eventId: string, endpointId: string, atMs: number) => ({
  due_shard: randomInt(DUE_SHARDS),
  due_ms: atMs,
  event_id: eventId,
  endpoint_id: endpointId,
});

/** `SET` of the delivery's due index entry in an update. */
const dueAssignment = (eventId: string, endpointId: string, atMs: number) =>
  webhookDeliveryEntity.indexAssignment('gsi3', dueEntry(eventId, endpointId, atMs));

/** Creates the delivery unless it exists; true when this call created it (and should queue it). */
export async function createDelivery(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  eventId: string,
  endpointId: string,
  platformCode: string,
  nowMs: number,
): Promise<boolean> {
  const expiresAtMs = nowMs + EVENT_RETENTION_MS;
  const put = webhookDeliveryEntity.put(
    ctx.tables,
    {
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
    },
    { extra: dueEntry(eventId, endpointId, nowMs + QUEUED_GRACE_MS), condition: 'attribute_not_exists(pk)' },
  );
  return writtenUnlessConditionFailed(ctx.db.send(new PutCommand(put.Put)));
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
  const due = dueAssignment(eventId, endpointId, nowMs + QUEUED_GRACE_MS);
  const update = webhookDeliveryEntity.update(
    ctx.tables,
    { event_id: eventId, endpoint_id: endpointId },
    {
      update: `SET #state = :pending, round_attempts = :zero, next_attempt_at = :now, ${due.expression} REMOVE failure_reason, lease_until`,
      condition: '#state IN (:succeeded, :failed)',
      names: { '#state': 'state', ...due.names },
      values: {
        ':pending': 'pending',
        ':zero': 0,
        ':now': nowMs,
        ...due.values,
        ':succeeded': 'succeeded',
        ':failed': 'failed',
      },
    },
  );
  return writtenUnlessConditionFailed(ctx.db.send(new UpdateCommand(update.Update)));
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
  const due = dueAssignment(eventId, endpointId, nowMs + leaseMs);
  const update = webhookDeliveryEntity.update(
    ctx.tables,
    { event_id: eventId, endpoint_id: endpointId },
    {
      update: `SET #state = :inflight, attempts = attempts + :one, round_attempts = round_attempts + :one, lease_until = :lease, ${due.expression}`,
      condition:
        '(#state IN (:pending, :scheduled) AND next_attempt_at <= :now) OR (#state = :inflight AND lease_until <= :now)',
      names: { '#state': 'state', ...due.names },
      values: {
        ':inflight': 'in_flight',
        ':pending': 'pending',
        ':scheduled': 'scheduled',
        ':one': 1,
        ':now': nowMs,
        ':lease': nowMs + leaseMs,
        ...due.values,
      },
    },
  );
  try {
    const out = await ctx.db.send(new UpdateCommand({ ...update.Update, ReturnValues: 'ALL_NEW' }));
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
  const names: Record<string, string> = { '#state': 'state' };
  const values: Record<string, unknown> = { ':inflight': 'in_flight', ':attempt': attempt, ':state': end.state };
  let update: string;
  if (end.state === 'scheduled') {
    const due = dueAssignment(delivery.event_id, delivery.endpoint_id, end.dueAtMs);
    update = `SET #state = :state, next_attempt_at = :next, ${due.expression} REMOVE lease_until`;
    Object.assign(names, due.names);
    Object.assign(values, { ':next': end.nextAttemptAtMs, ...due.values });
  } else {
    const due = webhookDeliveryEntity.indexRemoval('gsi3');
    Object.assign(names, due.names);
    if (end.state === 'failed') {
      update = `SET #state = :state, failure_reason = :reason REMOVE lease_until, next_attempt_at, ${due.expression}`;
      values[':reason'] = end.reason;
    } else {
      update = `SET #state = :state REMOVE lease_until, next_attempt_at, ${due.expression}`;
    }
  }
  try {
    await transactWrite(ctx, [
      {
        item: webhookDeliveryEntity.update(
          ctx.tables,
          { event_id: delivery.event_id, endpoint_id: delivery.endpoint_id },
          { update, condition: '#state = :inflight AND attempts = :attempt', names, values },
        ),
        onConditionFailed: () => new LostClaimError(),
      },
      {
        item: webhookAttemptEntity.put(ctx.tables, {
          event_id: delivery.event_id,
          endpoint_id: delivery.endpoint_id,
          attempt,
          ...record,
          expires_at_ms: expiresAtMs,
          ttl: Math.ceil(expiresAtMs / 1000),
        }),
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

/** An endpoint's attempts of the last 30 days as a list, oldest first. */
export function attemptsIndex(ctx: Pick<AppContext, 'clock'>, endpointId: string): ListIndex {
  const fromMs = ctx.clock.nowMs() - EVENT_RETENTION_MS;
  return webhookAttemptEntity.listIndex(
    'gsi1',
    { endpoint_id: endpointId },
    {
      // From `<30 days ago>##0000`, as the list always started (an event id is never empty).
      sortRange: {
        between: [
          webhookAttemptEntity.indexSortKey('gsi1', {
            endpoint_id: endpointId,
            attempted_at: fromMs,
            event_id: '',
            attempt: 0,
          }),
          '~',
        ],
      },
      descending: false,
    },
  );
}

/** An attempt as GET /webhooks/endpoints/{id}/attempts shows it. */
export function attemptFrom(item: Readonly<Record<string, unknown>>) {
  const stored: WebhookAttempt = webhookAttemptEntity.parse(item);
  return {
    event_id: stored.event_id,
    attempt: stored.attempt,
    attempted_at: stored.attempted_at,
    status_code: stored.status_code,
    latency_ms: stored.latency_ms,
    error: stored.error,
    outcome: stored.outcome,
    next_retry_at: stored.next_retry_at,
  };
}

/** What the sweep finds due: undispatched events and deliveries whose next step is late. */
type DueWork = { kind: 'event'; eventId: string } | { kind: 'delivery'; eventId: string; endpointId: string };

export async function dueWork(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  nowMs: number,
  limitPerShard: number,
): Promise<DueWork[]> {
  // Events and deliveries share the due index (`<due ms>#EVENT#<id>`, `<due ms>#DELIVERY#...`): everything due
  // by now sorts at or before `<now>#EVENT#~` ('~' after every id character, DELIVERY before EVENT).
  const shards = await Promise.all(
    Array.from({ length: DUE_SHARDS }, (_, shard) =>
      ctx.db.send(
        new QueryCommand({
          ...eventEntity.query(ctx.tables, 'gsi3', eventEntity.indexPartition('gsi3', { due_shard: shard }), {
            atMost: eventEntity.indexSortKey('gsi3', { due_shard: shard, due_ms: nowMs, event_id: '~' }),
          }),
          Limit: limitPerShard,
        }),
      ),
    ),
  );
  return shards.flatMap((out) =>
    (out.Items ?? []).map((item): DueWork => {
      if (item.type === 'event') {
        // A version 1 item written before the trim names its event; every event's key does.
        const event = eventEntity.parse(item);
        return { kind: 'event', eventId: event.event_id ?? eventIdOfKey(String(item.pk)) };
      }
      const delivery = webhookDeliveryEntity.parse(item);
      return { kind: 'delivery', eventId: delivery.event_id, endpointId: delivery.endpoint_id };
    }),
  );
}
