import type { AppContext } from '../context.js';
import { isEventType, type EventType } from '../domain/events.js';
import { markEventDispatched } from '../store/events.js';
import { createDelivery, restartDelivery } from '../store/webhook-deliveries.js';
import { endpointsOfPlatform, subscribes } from '../store/webhook-endpoints.js';
import type { DeliveryMessage, DeliveryQueue } from './queue.js';

/**
 * The dispatcher (design section 8): an event (or a request to redeliver one) fans out into one delivery per
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

export async function dispatch(ctx: AppContext, queue: DeliveryQueue, request: DispatchRequest): Promise<void> {
  if (!isEventType(request.eventType)) throw new Error(`event ${request.eventId}: unknown type ${request.eventType}`);
  const type: EventType = request.eventType;
  const endpoints = (await endpointsOfPlatform(ctx, request.platformCode)).filter((endpoint) =>
    request.onlyEndpointId !== undefined ? endpoint.endpoint_id === request.onlyEndpointId && endpoint.enabled : endpoint.enabled && subscribes(endpoint, type),
  );
  const nowMs = ctx.clock.nowMs();
  const queued: DeliveryMessage[] = [];
  for (const endpoint of endpoints) {
    const start = request.redelivery ? restartDelivery : createDelivery;
    if (await start(ctx, request.eventId, endpoint.endpoint_id, request.platformCode, nowMs)) {
      queued.push({ eventId: request.eventId, endpointId: endpoint.endpoint_id });
    }
  }
  if (queued.length) await queue.send(queued);
  if (!request.redelivery) await markEventDispatched(ctx, request.eventId);
}
