import type { PermissionArea } from '../domain/caller.js';
import { ForbiddenError } from '../domain/errors.js';
import { EVENT_TYPES, type EventType } from '../domain/events.js';

/**
 * The permission area a key needs to see an event of each type: the area of the route that shows the resource
 * (an event's `data` is that resource as its GET route shows it). The events routes and the webhook endpoints
 * themselves need `webhooks` besides, so a key limited to `webhooks` sees only `webhook.test` events.
 */
export const EVENT_TYPE_AREAS: Readonly<Record<EventType, PermissionArea>> = {
  'participant.status_changed': 'participants',
  'account_balance.changed': 'accounts',
  'trade.status_changed': 'trades',
  'payment.status_changed': 'payments',
  'withdrawal.status_changed': 'withdrawals',
  'award_distribution.completed': 'awards',
  'webhook.test': 'webhooks',
};

/** The event types a key holding `permissions` may see. */
export function visibleEventTypes(permissions: readonly PermissionArea[]): EventType[] {
  return EVENT_TYPES.filter((type) => permissions.includes(EVENT_TYPE_AREAS[type]));
}

/** Whether the key sees every type (then nothing needs filtering). */
export function seesEveryEventType(permissions: readonly PermissionArea[]): boolean {
  return visibleEventTypes(permissions).length === EVENT_TYPES.length;
}

/** 403 unless the key may see events of every one of `types`; the message names the areas it lacks. */
export function requireEventTypes(permissions: readonly PermissionArea[], types: readonly EventType[]): void {
  const lacking = [...new Set(types.map((type) => EVENT_TYPE_AREAS[type]))].filter(
    (area) => !permissions.includes(area),
  );
  if (lacking.length === 0) return;
  const named = types.filter((type) => lacking.includes(EVENT_TYPE_AREAS[type]));
  throw new ForbiddenError(
    `API key lacks the ${lacking.map((area) => `'${area}'`).join(', ')} permission needed for ${named.join(', ')} events`,
  );
}

/** What the API description says of it, on the events routes and the endpoints' (markdown). */
export const EVENT_VISIBILITY_DESCRIPTION = [
  "A key sees an event only when it holds the permission area of the event's type (besides `webhooks`, which",
  'these routes need); otherwise listing that type, reading or redelivering such an event is a 403 naming the',
  'area, and a list of every type leaves those events out:',
  '',
  ...EVENT_TYPES.map((type) => `- \`${type}\`: \`${EVENT_TYPE_AREAS[type]}\``),
].join('\n');

/** The same for subscriptions (create and change an endpoint). */
export const SUBSCRIPTION_VISIBILITY_DESCRIPTION = [
  'An endpoint receives the data of the events it subscribes to, so the key that sets its `url` or',
  '`event_types` must see every type subscribed (403 naming the area it lacks). An endpoint without',
  '`event_types` receives every type: only a key holding every area may create one or re-point it; any',
  'other key lists the types it may see. Its `description` and `enabled` any `webhooks` key may change.',
  '',
  EVENT_VISIBILITY_DESCRIPTION.split('\n').slice(4).join('\n'),
].join('\n');
