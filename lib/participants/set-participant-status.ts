import { NotFoundError } from '../domain/errors.js';
import type { ParticipantStatus } from '../domain/participant-status.js';
import { changeParticipantStatus, getParticipantStatusState } from '../store/participants.js';
import type { TaggedItem } from '../store/table/transaction-items.js';
import type { AppContext } from '../context.js';

interface StatusChange {
  platform_code: string;
  participant_code: string;
  status: ParticipantStatus;
  previous_status: string;
  /** False when the participant already had the status: nothing was written. */
  changed: boolean;
}

/**
 * Ops set a participant `locked`, `disabled` or back to `approved`. The change is conditioned on the status
 * (and change counter) just read, so running it twice, or two operators at once, never records two
 * transitions from one status; asking for the status it already has changes nothing and says so.
 * `alongWith` receives what changed and returns the items (the audit entry) that commit with it.
 */
export async function setParticipantStatus(
  ctx: AppContext,
  request: { platformCode: string; participantCode: string; status: ParticipantStatus },
  alongWith: (change: StatusChange) => readonly TaggedItem[] = () => [],
): Promise<StatusChange> {
  const state = await getParticipantStatusState(ctx, request.participantCode);
  // A participant of another platform reads like an unknown one, as on the API.
  if (!state || state.participant.platform_code !== request.platformCode) {
    throw new NotFoundError(`participant not found: ${request.participantCode} of platform ${request.platformCode}`);
  }
  const previous = state.participant.status;
  const change: StatusChange = {
    platform_code: request.platformCode,
    participant_code: request.participantCode,
    status: request.status,
    previous_status: previous,
    changed: previous !== request.status,
  };
  if (!change.changed) return change;
  await changeParticipantStatus(ctx, state, request.status, ctx.clock.nowMs(), alongWith(change));
  return change;
}
