/**
 * A participant's status and what it allows. Customers are created `approved`; ops move a participant to
 * `locked` (held, e.g. while a compliance question is open) or `disabled` (closed), and back to `approved`.
 * Only an approved participant may be quoted for, trade, send or receive a transfer, or receive a reward or
 * an award. Reading its data stays allowed, and what is already under way continues (docs/api.md, "Participant status").
 */
export const PARTICIPANT_STATUSES = ['approved', 'locked', 'disabled'] as const;
export type ParticipantStatus = (typeof PARTICIPANT_STATUSES)[number];

export function isParticipantStatus(value: string): value is ParticipantStatus {
  return (PARTICIPANT_STATUSES as readonly string[]).includes(value);
}

/** The one status that lets a participant's accounts take part in a booking a platform asks for. */
export const ACTIVE_STATUS: ParticipantStatus = 'approved';

/**
 * The 400 line for a participant that may not take part, naming the request field that carries its code.
 * `status` is what a read found; a booking refused by its transaction's condition knows only that the
 * participant is no longer approved.
 */
export function participantNotActive(field: string, participantCode: string, status?: string): string {
  return status === undefined
    ? `${field}: participant ${participantCode} is not approved (locked or disabled)`
    : `${field}: participant ${participantCode} is ${status}, not approved`;
}
