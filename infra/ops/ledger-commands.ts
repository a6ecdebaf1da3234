import { deposit } from '../../lib/ledger/deposit.js';
import { grantRelationship, RELATIONSHIP_KINDS, type RelationshipKind } from '../../lib/store/relationships.js';
import { required, UsageError, type Commands } from './command.js';

/** Money in from outside, and the relationships that let a platform act for a participant. */
export const ledgerCommands: Commands = {
  deposit: {
    usage: 'deposit --participant CODE --asset ASSET --amount AMOUNT [--account-group G] [--account-label L]',
    run: async (flags) => {
      const result = await deposit({
        participantCode: required(flags, 'participant'),
        asset: required(flags, 'asset'),
        amount: required(flags, 'amount'),
        accountGroup: flags['account-group'],
        accountLabel: flags['account-label'],
      });
      return { movement_id: result.movement_id, participant_code: flags.participant, asset: flags.asset, amount: flags.amount };
    },
  },
  'relationship grant': {
    usage: `relationship grant --platform CODE --participant CODE [--kind ${RELATIONSHIP_KINDS.join('|')}]`,
    run: async (flags) => {
      const kind = (flags.kind ?? 'submits_platform_transfers_for') as RelationshipKind;
      if (!RELATIONSHIP_KINDS.includes(kind)) throw new UsageError(`unknown relationship kind ${kind}`);
      await grantRelationship(required(flags, 'platform'), kind, required(flags, 'participant'));
      return { platform_code: flags.platform, participant_code: flags.participant, kind, granted: true };
    },
  },
};
