import type { DynamoDBRecord } from 'aws-lambda';
import type { DispatchRequest } from './dispatch-events.js';

/**
 * Which stream records the dispatcher takes: inserts of event items and of redelivery requests. On AWS this
 * is the event source mapping's filter (Lambda drops the rest before invoking); the local poller applies the
 * same pattern with `matchesDispatchFilter`, so both see the same records.
 */
export const DISPATCHED_ITEM_TYPES = ['event', 'event_redelivery'] as const;

export const DISPATCH_FILTER_PATTERN = {
  eventName: ['INSERT'],
  dynamodb: { NewImage: { type: { S: [...DISPATCHED_ITEM_TYPES] } } },
};

export function matchesDispatchFilter(record: DynamoDBRecord): boolean {
  const type = record.dynamodb?.NewImage?.type?.S;
  return record.eventName === 'INSERT' && type !== undefined && (DISPATCHED_ITEM_TYPES as readonly string[]).includes(type);
}

/** The dispatch a stream record asks for (the new image holds everything needed: no read). */
export function dispatchRequestOf(record: DynamoDBRecord): DispatchRequest {
  const image = record.dynamodb?.NewImage;
  const eventId = image?.event_id?.S;
  const platformCode = image?.platform_code?.S;
  const eventType = image?.event_type?.S;
  if (!eventId || !platformCode || !eventType) throw new Error(`stream record ${record.eventID}: not an event item`);
  return { eventId, platformCode, eventType, redelivery: image?.type?.S === 'event_redelivery', onlyEndpointId: image?.only_endpoint_id?.S };
}
