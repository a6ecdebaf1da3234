import { randomBytes, randomInt } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AppContext } from '../context.js';
import { writtenUnlessConditionFailed } from './table/conditional.js';
import { EVENT_RETENTION_MS, type EventEnvelope, type EventType, type ResourceType } from '../domain/events.js';
import { DUE_SHARDS, EVENT_ITEM_VERSION, eventEntity, eventIdOfKey, eventRedeliveryEntity } from './entities/event.js';
import { combineFilters, equalityFilter, type ListFilter, type ListIndex } from './table/paging.js';
import { transactWrite } from './table/transactions.js';
import { type TaggedItem } from './table/transaction-items.js';

/**
 * Event items. Every state change adds its events through `eventItem`, in the same
 * `TransactWriteItems` as the change, so an event exists exactly when its change committed. The envelope is
 * serialized once, here: every delivery sends (and signs) exactly these bytes.
 */
interface NewEvent {
  type: EventType;
  platformCode: string;
  resource: { type: ResourceType; id: string };
  /** Increases per resource (the resource's own change counter). */
  sequence: number;
  previousStatus?: string | null;
  /** The resource as its GET route shows it, without personal data. */
  data: Record<string, unknown>;
  /** Deliver to this endpoint only, whatever it subscribes to (webhook.test). */
  onlyEndpointId?: string;
}

export { DUE_SHARDS, EVENT_ITEM_VERSION, eventIdOfKey };

/** An event the stream hasn't dispatched this long after its commit is dispatched by the sweep. */
const DISPATCH_GRACE_MS = 60_000;

/** `evt_` + milliseconds (base 36, fixed width, so ids sort by time) + 16 random hex digits. No dots (Standard Webhooks). */
function newEventId(nowMs: number): string {
  return `evt_${nowMs.toString(36).padStart(9, '0')}${randomBytes(8).toString('hex')}`;
}

function envelopeOf(event: NewEvent, eventId: string, createdAtMs: number): EventEnvelope {
  return {
    id: eventId,
    type: event.type,
    created_at: createdAtMs,
    platform_code: event.platformCode,
    resource: event.resource,
    sequence: event.sequence,
    previous_status: event.previousStatus ?? null,
    data: event.data,
  };
}

/**
 * The Put that records an event. It is marked undispatched (the due index) until the dispatcher has fanned it
 * out to the platform's endpoints, so the sweep finds any event the stream did not deliver.
 *
 * The item holds the body and only what a key, an index or a filter needs besides: every booking writes one
 * per platform account it moves, and an item over 1 KB costs twice the write units in a transaction. The event
 * id is the key's (`eventIdOfKey`), its type, time and sequence are in the body (and the time in the index
 * keys), and it expires at its TTL second.
 */
export function eventItem(
  ctx: Pick<AppContext, 'tables'>,
  event: NewEvent,
  nowMs: number,
  eventId = newEventId(nowMs),
): TaggedItem {
  const envelope = envelopeOf(event, eventId, nowMs);
  return {
    item: eventEntity.put(
      ctx.tables,
      {
        platform_code: event.platformCode,
        resource_id: event.resource.id,
        body: JSON.stringify(envelope),
        ...(event.onlyEndpointId !== undefined && { only_endpoint_id: event.onlyEndpointId }),
        ttl: eventExpirySeconds(nowMs),
      },
      {
        extra: {
          event_id: eventId,
          event_type: event.type,
          created_ms: nowMs,
          due_shard: randomInt(DUE_SHARDS),
          due_ms: nowMs + DISPATCH_GRACE_MS,
        },
        condition: 'attribute_not_exists(pk)',
      },
    ),
  };
}

/**
 * The same change told to every platform that may read the resource (a trade reported by one platform with a
 * party of another): one event each, with its own id, in the change's transaction. Sequence and data are the
 * resource's, so they are the same in each.
 */
export function eventItemsFor(
  ctx: Pick<AppContext, 'tables'>,
  platformCodes: readonly string[],
  event: Omit<NewEvent, 'platformCode'>,
  nowMs: number,
): TaggedItem[] {
  return [...new Set(platformCodes)].map((platformCode) => eventItem(ctx, { ...event, platformCode }, nowMs));
}

/** When an event made at `nowMs` expires, in whole seconds: its TTL, and the instant GET /events stops showing it. */
function eventExpirySeconds(nowMs: number): number {
  return Math.ceil((nowMs + EVENT_RETENTION_MS) / 1000);
}

interface StoredEvent {
  envelope: EventEnvelope;
  /** The exact bytes deliveries send. */
  body: string;
  dispatched: boolean;
  expiresAtMs: number;
  onlyEndpointId: string | undefined;
}

/** A stored event item, parsed, as the readers use it. */
export function storedEventFrom(item: Readonly<Record<string, unknown>>): StoredEvent {
  const stored = eventEntity.parse(item);
  return {
    envelope: JSON.parse(stored.body) as EventEnvelope,
    body: stored.body,
    dispatched: stored.dispatched === true,
    onlyEndpointId: stored.only_endpoint_id,
    // Its `ttl`; a version 1 item (no `item_version`) written before the trim carries `expires_at_ms`.
    expiresAtMs:
      item.item_version === undefined && stored.expires_at_ms !== undefined ? stored.expires_at_ms : stored.ttl * 1000,
  };
}

/** One of the platform's events still inside its 30 days; another platform's event reads as missing. */
export async function getEvent(
  ctx: Pick<AppContext, 'clock' | 'db' | 'tables'>,
  platformCode: string | null,
  eventId: string,
): Promise<StoredEvent | undefined> {
  if (!/^evt_[0-9a-z]{1,60}$/.test(eventId)) return undefined;
  const out = await ctx.db.send(
    new GetCommand(eventEntity.get(ctx.tables, { event_id: eventId }, { consistent: true })),
  );
  if (!out.Item || out.Item.type !== 'event') return undefined;
  const event = storedEventFrom(out.Item);
  if (platformCode !== null && event.envelope.platform_code !== platformCode) return undefined;
  if (event.expiresAtMs <= ctx.clock.nowMs()) return undefined;
  return event;
}

/** The dispatcher has fanned the event out: it leaves the due index (a MODIFY the stream filter ignores). */
export async function markEventDispatched(ctx: Pick<AppContext, 'db' | 'tables'>, eventId: string): Promise<void> {
  // Gone already (TTL): nothing left to mark.
  const dueIndex = eventEntity.indexRemoval('gsi3');
  const update = eventEntity.update(
    ctx.tables,
    { event_id: eventId },
    {
      update: `SET dispatched = :true REMOVE ${dueIndex.expression}`,
      condition: 'attribute_exists(pk)',
      names: dueIndex.names,
      values: { ':true': true },
    },
  );
  await writtenUnlessConditionFailed(ctx.db.send(new UpdateCommand(update.Update)));
}

/**
 * How far before `created_after` a catch-up reads: the longest an event can take, after its `created_at`, to
 * show in the events index. `created_at` is the writer's clock when it built the change's transaction; the
 * transaction commits before its function times out (60 s at most: settlement tasks; API functions and the
 * queue consumers less), and the index shows it after its replication lag (on AWS usually well under a
 * second; a minute allowed). An event listed after a later one was read, by a consumer that then asks for
 * `created_after=<the later one's created_at>`, is inside this window: read again, not skipped. The consumer
 * skips the ids it has already applied, as it does for webhook retries.
 */
export const CATCH_UP_OVERLAP_MS = 120_000;

interface EventFilters {
  type?: EventType;
  /** Only events of these types (the ones the caller's key may see), when not every type. */
  types?: readonly EventType[];
  resourceId?: string;
  /** A catch-up from here: events created after it, and those of `CATCH_UP_OVERLAP_MS` before it again (ms). */
  createdAfterMs?: number;
}

/**
 * A platform's events as a list (oldest first): its events index partition, or the partition of one type
 * when the list is filtered by type; the 30-day horizon and `created_after` (less the overlap) are a key
 * range; `resource_id` narrows the read with a filter (under the paging read budget).
 */
export function eventsIndex(ctx: Pick<AppContext, 'clock'>, platformCode: string, filters: EventFilters): ListIndex {
  const horizonMs = ctx.clock.nowMs() - EVENT_RETENTION_MS;
  const fromMs = Math.max(
    horizonMs,
    filters.createdAfterMs !== undefined ? filters.createdAfterMs + 1 - CATCH_UP_OVERLAP_MS : horizonMs,
  );
  // Both lists' sort keys are `<created ms>#<event id>`.
  const options = {
    sortRange: {
      between: [
        eventEntity.indexSortPrefix('gsi1', { created_ms: fromMs }),
        eventEntity.indexSortKey('gsi1', {
          platform_code: platformCode,
          created_ms: Number.MAX_SAFE_INTEGER,
          event_id: '~',
        }),
      ] as [string, string],
    },
    descending: false,
    filter: combineFilters([equalityFilter({ resource_id: filters.resourceId }), typesFilter(platformCode, filters)]),
  };
  return filters.type
    ? eventEntity.listIndex('gsi2', { platform_code: platformCode, event_type: filters.type }, options)
    : eventEntity.listIndex('gsi1', { platform_code: platformCode }, options);
}

/**
 * The types a list of every type may show, as a filter on the type's own index partition key (the item
 * carries its type there only); undefined when the list is of one type already, or of every type.
 */
function typesFilter(platformCode: string, filters: EventFilters): ListFilter | undefined {
  if (filters.type || !filters.types) return undefined;
  const values = Object.fromEntries(
    filters.types.map((type, i) => [
      `:type${i}`,
      eventEntity.indexPartition('gsi2', { platform_code: platformCode, event_type: type }),
    ]),
  );
  // A key that may see no type at all still reads a valid (empty) list.
  if (filters.types.length === 0) return { expression: 'attribute_not_exists(pk)' };
  // The attribute holding the type's list partition (gsi2's partition key).
  const typeKey = eventEntity.listIndex('gsi2', { platform_code: platformCode, event_type: '' }, { descending: false })
    .partition.attribute;
  return { expression: `#typekey IN (${Object.keys(values).join(', ')})`, names: { '#typekey': typeKey }, values };
}

/** Asks for an event to be sent again to the platform's endpoints: an insert the dispatcher picks up from the stream. */
export async function putRedeliveryRequest(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  event: StoredEvent,
  nowMs: number,
  alongWith: readonly TaggedItem[] = [],
): Promise<void> {
  const expiresAtMs = nowMs + 24 * 60 * 60 * 1000;
  await transactWrite(ctx, [
    {
      item: eventRedeliveryEntity.put(
        ctx.tables,
        {
          event_id: event.envelope.id,
          platform_code: event.envelope.platform_code,
          event_type: event.envelope.type,
          ...(event.onlyEndpointId !== undefined && { only_endpoint_id: event.onlyEndpointId }),
          created_at: nowMs,
          expires_at_ms: expiresAtMs,
          ttl: Math.ceil(expiresAtMs / 1000),
        },
        { extra: { nonce: randomBytes(4).toString('hex') } },
      ),
    },
    ...alongWith,
  ]);
}
