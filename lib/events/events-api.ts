import type { AppContext } from '../context.js';
import { NO_REQUEST_CLAIM, type RequestClaim } from '../store/windows.js';
import { NotFoundError } from '../domain/errors.js';
import { getEvent, putRedeliveryRequest } from '../store/events.js';

/** GET /events/{id}: one of the platform's events (another platform's, or one past its 30 days, is not found). */
export async function findEvent(ctx: AppContext, platformCode: string, eventId: string) {
  const event = await getEvent(ctx, platformCode, eventId);
  if (!event) throw new NotFoundError(`event not found: ${eventId}`);
  return { message: event.envelope };
}

/**
 * POST /events/{id}/redeliver: the event goes again to the platform's enabled endpoints that subscribe to
 * it, with the same `webhook-id`; a delivery still being retried is left to its schedule.
 */
export async function redeliverEvent(
  ctx: AppContext,
  platformCode: string,
  eventId: string,
  claim: RequestClaim = NO_REQUEST_CLAIM,
) {
  const event = await getEvent(ctx, platformCode, eventId);
  if (!event) throw new NotFoundError(`event not found: ${eventId}`);
  const nowMs = ctx.clock.nowMs();
  const message = { id: eventId, redelivery_requested_at: nowMs };
  await putRedeliveryRequest(ctx, event, nowMs, claim(message));
  return { message };
}
