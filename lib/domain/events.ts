/**
 * The events a platform can learn of. Each is recorded in the same transaction as the
 * state change it describes; its envelope is the same in `GET /events` and in a webhook delivery.
 */
export const EVENT_TYPES = [
  'participant.status_changed',
  'account_balance.changed',
  'trade.status_changed',
  'payment.status_changed',
  'withdrawal.status_changed',
  'award_distribution.completed',
  'webhook.test',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}

/** The resource an event is about; `sequence` increases per resource so a receiver can drop stale events. */
export type ResourceType =
  | 'participant'
  | 'account'
  | 'trade'
  | 'payment'
  | 'withdrawal'
  | 'award_distribution'
  | 'webhook_endpoint';

export interface EventEnvelope {
  /** `evt_` + a time-ordered id; the `webhook-id` of every delivery of this event. */
  id: string;
  type: EventType;
  /** UNIX milliseconds of the commit that recorded it. */
  created_at: number;
  platform_code: string;
  resource: { type: ResourceType; id: string };
  sequence: number;
  previous_status: string | null;
  /** The resource as its GET route shows it, without personal data. */
  data: Record<string, unknown>;
}

/** Events are kept (and listed by GET /events) for 30 days. */
export const EVENT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * Field names that carry personal data somewhere in the service. Event data is built from allow-listed
 * fields, and this list is the second line of defence: an event whose data holds one of these is a bug.
 */
const PERSONAL_DATA_FIELDS = [
  'first_name',
  'last_name',
  'middle_name',
  'email',
  'address',
  'street_address',
  'city',
  'postal_code',
  'zip',
  'phone_number',
  'date_of_birth',
  'tax_id',
  'id_number',
  'id_type',
  'withdrawal_address',
  'destination_address',
] as const;

/** Every personal-data key found anywhere in `value` (nested objects and arrays included). */
export function personalDataKeys(value: unknown): string[] {
  const found: string[] = [];
  const visit = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node && typeof node === 'object') {
      for (const [key, child] of Object.entries(node)) {
        if ((PERSONAL_DATA_FIELDS as readonly string[]).includes(key)) found.push(key);
        visit(child);
      }
    }
  };
  visit(value);
  return found;
}
