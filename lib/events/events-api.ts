import type { AppContext } from '../context.js';
import { NO_REQUEST_CLAIM, type RequestClaim } from '../store/windows.js';
import { NotFoundError } from '../domain/errors.js';
import { getEvent, putRedeliveryRequest } from '../store/events.js';
import type { AuthContext } from '../domain/caller.js';
import { requireEventTypes } from './visibility.js';

/** The key asking: its platform, and the areas whose events it may see (`visibility.ts`). */
type Caller = Pick<AuthContext, 'platformCode' | 'permissions'>;

/**
 * GET /events/{id}: one of the platform's events (another platform's, or one past its 30 days, is not found);
 * 403 when the key lacks the area of its type.
 */
export async function findEvent(ctx: AppContext, caller: Caller, eventId: string) {
  const event = await getEvent(ctx, caller.platformCode, eventId);
  if (!event) throw new NotFoundError(`event not found: ${eventId}`);
  requireEventTypes(caller.permissions, [event.envelope.type]);
  return { message: event.envelope };
}

/**
 * POST /events/{id}/redeliver: the event goes again to the platform's enabled endpoints that subscribe to
 * it, with the same `webhook-id`; a delivery still being retried is left to its schedule.
 */
export async function redeliverEvent(
  ctx: AppContext,
  caller: Caller,
  eventId: string,
  claim: RequestClaim = NO_REQUEST_CLAIM,
) {
  const event = await getEvent(ctx, caller.platformCode, eventId);
  if (!event) throw new NotFoundError(`event not found: ${eventId}`);
  // Sent again to the platform's own endpoints only, but asking for it is acting on the event: the key must see it.
  requireEventTypes(caller.permissions, [event.envelope.type]);
  const nowMs = ctx.clock.nowMs();
  const message = { id: eventId, redelivery_requested_at: nowMs };
  await putRedeliveryRequest(ctx, event, nowMs, claim(message));
  return { message };
}
