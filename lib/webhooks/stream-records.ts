import type { DynamoDBRecord } from 'aws-lambda';
import { eventIdOfKey } from '../store/events.js';
import type { DispatchRequest } from './dispatch-events.js';

/**
 * Which stream records the dispatcher takes: inserts of event items and of redelivery requests. On AWS this
 * is the event source mapping's filter (Lambda drops the rest before invoking); the local poller applies the
 * same pattern with `matchesDispatchFilter`, so both see the same records.
 */
const DISPATCHED_ITEM_TYPES = ['event', 'event_redelivery'] as const;

export const DISPATCH_FILTER_PATTERN = {
  eventName: ['INSERT'],
  dynamodb: { NewImage: { type: { S: [...DISPATCHED_ITEM_TYPES] } } },
};

export function matchesDispatchFilter(record: DynamoDBRecord): boolean {
  const type = record.dynamodb?.NewImage?.type?.S;
  return (
    record.eventName === 'INSERT' && type !== undefined && (DISPATCHED_ITEM_TYPES as readonly string[]).includes(type)
  );
}

/** The dispatch a stream record asks for (the new image holds everything needed: no read). */
export function dispatchRequestOf(record: DynamoDBRecord): DispatchRequest {
  const image = record.dynamodb?.NewImage;
  const key = image?.pk?.S;
  const eventId = image?.event_id?.S ?? (key === undefined ? undefined : eventIdOfKey(key));
  const platformCode = image?.platform_code?.S;
  // A redelivery request names the type; an event item has it in its body only.
  const eventType = image?.event_type?.S ?? typeInBody(image?.body?.S);
  if (!eventId || !platformCode || !eventType) throw new Error(`stream record ${record.eventID}: not an event item`);
  return {
    eventId,
    platformCode,
    eventType,
    redelivery: image?.type?.S === 'event_redelivery',
    onlyEndpointId: image?.only_endpoint_id?.S,
  };
}

function typeInBody(body: string | undefined): string | undefined {
  if (body === undefined) return undefined;
  const type: unknown = (JSON.parse(body) as { type?: unknown }).type;
  return typeof type === 'string' ? type : undefined;
}
