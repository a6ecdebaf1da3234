import { randomBytes, randomInt } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AppContext } from '../context.js';
import { writtenUnlessConditionFailed } from './table/conditional.js';
import { EVENT_RETENTION_MS, type EventEnvelope, type EventType, type ResourceType } from '../domain/events.js';
import { keys } from './keys.js';
import { readInteger } from './table/integers.js';
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

/**
 * The event item's schema version (lib/store/README.md, "Item versions"). 2: its expiry is its `ttl` (whole
 * seconds). 1 (no `item_version`): either that, or (written before the items were trimmed) `expires_at_ms`.
 */
export const EVENT_ITEM_VERSION = 2;

/** Shards of the due index; the sweep reads them all. */
export const DUE_SHARDS = 8;

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
    item: {
      Put: {
        TableName: ctx.tables.main,
        Item: {
          ...keys.event(eventId),
          type: 'event',
          platform_code: event.platformCode,
          resource_id: event.resource.id,
          body: JSON.stringify(envelope),
          ...(event.onlyEndpointId !== undefined && { only_endpoint_id: event.onlyEndpointId }),
          ttl: eventExpirySeconds(nowMs),
          item_version: EVENT_ITEM_VERSION,
          gsi1pk: keys.eventsOfPlatform(event.platformCode),
          gsi1sk: keys.eventSortKey(nowMs, eventId),
          gsi2pk: keys.eventsOfPlatformByType(event.platformCode, event.type),
          gsi2sk: keys.eventSortKey(nowMs, eventId),
          gsi3pk: keys.webhooksDue(randomInt(DUE_SHARDS)),
          gsi3sk: keys.webhooksDueSortKey(nowMs + DISPATCH_GRACE_MS, `EVENT#${eventId}`),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
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

/**
 * When a stored event expires (ms): its `ttl`; a version 1 item (no `item_version`) written before the trim
 * carries `expires_at_ms`. Not through table/item-versions.ts: every function writing events would load it.
 */
function eventExpiryMs(item: Record<string, any>): number {
  if (item.item_version === undefined && item.expires_at_ms !== undefined) return readInteger(item.expires_at_ms);
  return readInteger(item.ttl) * 1000;
}

/** The id of the event an event item (or a redelivery request, in the same partition) belongs to, from its key. */
export function eventIdOfKey(pk: string): string {
  return pk.slice(keys.event('').pk.length);
}

interface StoredEvent {
  envelope: EventEnvelope;
  /** The exact bytes deliveries send. */
  body: string;
  dispatched: boolean;
  expiresAtMs: number;
  onlyEndpointId: string | undefined;
}

export function storedEventFrom(item: Record<string, any>): StoredEvent {
  return {
    envelope: JSON.parse(item.body as string) as EventEnvelope,
    body: item.body as string,
    dispatched: item.dispatched === true,
    onlyEndpointId: item.only_endpoint_id ?? undefined,
    expiresAtMs: eventExpiryMs(item),
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
    new GetCommand({ TableName: ctx.tables.main, Key: keys.event(eventId), ConsistentRead: true }),
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
  await writtenUnlessConditionFailed(
    ctx.db.send(
      new UpdateCommand({
        TableName: ctx.tables.main,
        Key: keys.event(eventId),
        UpdateExpression: 'SET dispatched = :true REMOVE gsi3pk, gsi3sk',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':true': true },
      }),
    ),
  );
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
  const index = filters.type ? 'gsi2' : 'gsi1';
  return {
    indexName: index,
    partition: {
      attribute: `${index}pk`,
      value: filters.type
        ? keys.eventsOfPlatformByType(platformCode, filters.type)
        : keys.eventsOfPlatform(platformCode),
    },
    sortAttribute: `${index}sk`,
    sortRange: { between: [keys.eventSortKey(fromMs, ''), keys.eventSortKey(Number.MAX_SAFE_INTEGER, '~')] },
    descending: false,
    filter: combineFilters([equalityFilter({ resource_id: filters.resourceId }), typesFilter(platformCode, filters)]),
  };
}

/**
 * The types a list of every type may show, as a filter on the type's own index partition key (the item
 * carries its type there only); undefined when the list is of one type already, or of every type.
 */
function typesFilter(platformCode: string, filters: EventFilters): ListFilter | undefined {
  if (filters.type || !filters.types) return undefined;
  const values = Object.fromEntries(
    filters.types.map((type, i) => [`:type${i}`, keys.eventsOfPlatformByType(platformCode, type)]),
  );
  // A key that may see no type at all still reads a valid (empty) list.
  if (filters.types.length === 0) return { expression: 'attribute_not_exists(pk)' };
  return { expression: `#typekey IN (${Object.keys(values).join(', ')})`, names: { '#typekey': 'gsi2pk' }, values };
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
      item: {
        Put: {
          TableName: ctx.tables.main,
          Item: {
            pk: keys.event(event.envelope.id).pk,
            sk: `REDELIVERY#${String(nowMs).padStart(15, '0')}#${randomBytes(4).toString('hex')}`,
            type: 'event_redelivery',
            event_id: event.envelope.id,
            platform_code: event.envelope.platform_code,
            event_type: event.envelope.type,
            ...(event.onlyEndpointId !== undefined && { only_endpoint_id: event.onlyEndpointId }),
            created_at: nowMs,
            expires_at_ms: expiresAtMs,
            ttl: Math.ceil(expiresAtMs / 1000),
          },
        },
      },
    },
    ...alongWith,
  ]);
}
