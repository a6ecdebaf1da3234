import type { AppContext } from '../context.js';
import { isEventType, type EventType } from '../domain/events.js';
import { markEventDispatched } from '../store/events.js';
import { createDelivery, restartDelivery } from '../store/webhook-deliveries.js';
import { endpointsOfPlatform, subscribes, type StoredEndpoint } from '../store/webhook-endpoints.js';
import type { DeliveryMessage, DeliveryQueue } from './queue.js';

/**
 * The dispatcher: an event (or a request to redeliver one) fans out into one delivery per
 * enabled endpoint of its platform that subscribes to its type. Each delivery is a conditional put, so a
 * stream batch delivered twice, or the sweep dispatching an event the stream already did, creates nothing
 * twice; only deliveries this call created are queued.
 */
export interface DispatchRequest {
  eventId: string;
  platformCode: string;
  eventType: string;
  /** A redelivery starts a new round for deliveries that finished; a new event creates them. */
  redelivery: boolean;
  /** webhook.test: this endpoint only, whatever it subscribes to. */
  onlyEndpointId?: string;
}

/** Where a dispatch finds a platform's endpoints: a fresh read each time, or one read per stream batch. */
type EndpointSource = (platformCode: string) => Promise<StoredEndpoint[]>;

/**
 * The endpoints of each platform read once (strongly consistent) for the events of one stream batch: a busy
 * platform's batch of events costs one query instead of one per event. An endpoint created or changed while
 * the batch is dispatched counts from the next batch on, as if it had changed a moment later.
 */
export function endpointsPerBatch(ctx: AppContext): EndpointSource {
  const read = new Map<string, Promise<StoredEndpoint[]>>();
  return (platformCode) => {
    let endpoints = read.get(platformCode);
    if (!endpoints) {
      endpoints = endpointsOfPlatform(ctx, platformCode);
      read.set(platformCode, endpoints);
      // A failed read is not remembered: the record fails, and its retry reads again.
      endpoints.catch(() => read.delete(platformCode));
    }
    return endpoints;
  };
}

export async function dispatch(
  ctx: AppContext,
  queue: DeliveryQueue,
  request: DispatchRequest,
  endpointsOf: EndpointSource = (platformCode) => endpointsOfPlatform(ctx, platformCode),
): Promise<void> {
  if (!isEventType(request.eventType)) throw new Error(`event ${request.eventId}: unknown type ${request.eventType}`);
  const type: EventType = request.eventType;
  const endpoints = (await endpointsOf(request.platformCode)).filter((endpoint) =>
    request.onlyEndpointId !== undefined
      ? endpoint.endpoint_id === request.onlyEndpointId && endpoint.enabled
      : endpoint.enabled && subscribes(endpoint, type),
  );
  const nowMs = ctx.clock.nowMs();
  const start = request.redelivery ? restartDelivery : createDelivery;
  const created = await Promise.all(
    endpoints.map((endpoint) => start(ctx, request.eventId, endpoint.endpoint_id, request.platformCode, nowMs)),
  );
  const queued: DeliveryMessage[] = endpoints
    .filter((_, i) => created[i])
    .map((endpoint) => ({
      eventId: request.eventId,
      endpointId: endpoint.endpoint_id,
      platformCode: request.platformCode,
    }));
  // Both after the deliveries exist, in either order: a delivery whose message is lost is due in the index,
  // where the sweep finds it, so marking the event dispatched need not wait for the queue.
  await Promise.all([
    queued.length ? queue.send(queued) : undefined,
    request.redelivery ? undefined : markEventDispatched(ctx, request.eventId),
  ]);
}
