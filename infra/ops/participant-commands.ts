import { isParticipantStatus, PARTICIPANT_STATUSES } from '../../lib/domain/participant-status.js';
import { setParticipantStatus } from '../../lib/participants/set-participant-status.js';
import { required, UsageError, type Commands } from './command.js';

/** A participant's status, set by ops: locked or disabled participants can't trade, transfer or receive. */
export const participantCommands: Commands = {
  'participant status': {
    usage: `participant status --platform CODE --participant CODE --status ${PARTICIPANT_STATUSES.join('|')}`,
    options: {
      platform: { type: 'string', required: true },
      participant: { type: 'string', required: true },
      status: { type: 'string', required: true },
    },
    mutates: true,
    run: async (flags, ctx, audit) => {
      const status = required(flags, 'status');
      if (!isParticipantStatus(status))
        throw new UsageError(`--status must be one of ${PARTICIPANT_STATUSES.join(', ')}, got '${status}'`);
      // The operator's record commits with the change; a no-op writes no change (the CLI records the attempt).
      return setParticipantStatus(
        ctx,
        { platformCode: required(flags, 'platform'), participantCode: required(flags, 'participant'), status },
        (change) => [
          audit.item({
            platform_code: change.platform_code,
            participant_code: change.participant_code,
            status: change.status,
            previous_status: change.previous_status,
          }),
        ],
      );
    },
  },
};
