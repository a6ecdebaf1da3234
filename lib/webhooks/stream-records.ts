import type { DynamoDBRecord } from 'aws-lambda';
import * as z from 'zod/mini';
import { formatIssues, nonEmptyString } from '../domain/validation.js';
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

/**
 * How the dispatcher reads the stream, as deployed (the event source mapping, infra/webhooks.ts) and under
 * `npm start` (the local poller, infra/local/webhook-runtime.ts): batches of up to `batchSize` records, and up
 * to `parallelizationFactor` batches of one shard dispatched at once, a record's lane chosen by its key (so a
 * key's records stay in order). With one batch at a time per shard, an event written while a batch of a busy
 * stream is dispatched waits for the whole batch, its slowest record included, before it is even read.
 */
export const DISPATCH_STREAM_SOURCE = { batchSize: 100, parallelizationFactor: 4 } as const;

/** A string attribute of a stream image (`{ S: ... }`), its text checked by `text`. */
const stringAttribute = <Text extends z.ZodMiniType<string>>(text: Text) =>
  z.object({ S: text }, 'must be { S: text }');

/**
 * The new image of a dispatched item, as far as the dispatch reads it. An event item has its id in its key
 * and its type in its body; items written before that (and redelivery requests) have both as attributes,
 * which win when present. Its other attributes are not read.
 */
const dispatchedImage = z.object(
  {
    pk: z.optional(stringAttribute(z.string())),
    type: z.optional(stringAttribute(z.string())),
    event_id: z.optional(stringAttribute(nonEmptyString())),
    event_type: z.optional(stringAttribute(nonEmptyString())),
    platform_code: stringAttribute(nonEmptyString()),
    body: z.optional(stringAttribute(z.string())),
    only_endpoint_id: z.optional(stringAttribute(z.string())),
  },
  'must be an item image',
);

/** The type an event's body names (its envelope's `type`), or the problem with the body. */
function typeInBody(body: string): { type: string } | { problem: string } {
  let envelope: unknown;
  try {
    envelope = JSON.parse(body);
  } catch {
    return { problem: 'not JSON' };
  }
  const parsed = z.object({ type: nonEmptyString() }).safeParse(envelope);
  return parsed.success ? { type: parsed.data.type } : { problem: 'names no event type (a non-empty string)' };
}

/** A dispatched record: its new image, turned into the dispatch it asks for (everything is in it: no read). */
const dispatchedRecord = z.pipe(
  z.object({ dynamodb: z.object({ NewImage: dispatchedImage }, 'must be an object') }, 'must be an object'),
  z.transform(({ dynamodb: { NewImage: image } }, payload): DispatchRequest => {
    const problem = (path: string[], message: string) =>
      payload.issues.push({ code: 'custom', message, input: image, path: ['dynamodb', 'NewImage', ...path] });
    const eventId = image.event_id?.S ?? (image.pk === undefined ? undefined : eventIdOfKey(image.pk.S));
    if (!eventId) problem(['pk', 'S'], 'no event id: neither an event_id nor an event key');
    // A redelivery request names the type; an event item has it in its body only.
    let eventType = image.event_type?.S;
    if (eventType === undefined) {
      if (image.body === undefined) problem(['body'], 'no event type: neither an event_type nor a body');
      else {
        const inBody = typeInBody(image.body.S);
        if ('type' in inBody) eventType = inBody.type;
        else problem(['body', 'S'], inBody.problem);
      }
    }
    return {
      eventId: eventId ?? '',
      platformCode: image.platform_code.S,
      eventType: eventType ?? '',
      redelivery: image.type?.S === 'event_redelivery',
      onlyEndpointId: image.only_endpoint_id?.S,
    };
  }),
);

/**
 * The dispatch a stream record asks for. A record that isn't an event item (or a redelivery request) throws,
 * naming what is wrong: the record is reported failed, retried, and then left to the mapping's failure
 * destination.
 */
export function dispatchRequestOf(record: DynamoDBRecord): DispatchRequest {
  const parsed = dispatchedRecord.safeParse(record);
  if (parsed.success) return parsed.data;
  const problems = formatIssues(parsed.error.issues, 'record').join('; ');
  throw new Error(`stream record ${record.eventID}: not an event item (${problems})`);
}
