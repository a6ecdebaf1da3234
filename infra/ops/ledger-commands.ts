import { deposit } from '../../lib/ledger/deposit.js';
import {
  grantRelationship,
  RELATIONSHIP_KINDS,
  revokeRelationship,
  type RelationshipKind,
} from '../../lib/store/relationships.js';
import { optional, required, UsageError, type Commands, type Flags, type OptionSpec } from './command.js';
import { accountLabelProblem } from '../../lib/domain/validation.js';

/** What granting and revoking a relationship both take. */
const RELATIONSHIP_FLAGS_USAGE = `--platform CODE --participant CODE [--kind ${RELATIONSHIP_KINDS.join('|')}]`;
const RELATIONSHIP_OPTIONS: Record<string, OptionSpec> = {
  platform: { type: 'string', required: true },
  participant: { type: 'string', required: true },
  kind: { type: 'string' },
};

function relationshipFlags(flags: Flags): { kind: RelationshipKind; platformCode: string; participantCode: string } {
  const kind = (optional(flags, 'kind') ?? 'submits_platform_transfers_for') as RelationshipKind;
  if (!RELATIONSHIP_KINDS.includes(kind))
    throw new UsageError(`unknown relationship kind ${kind} (known: ${RELATIONSHIP_KINDS.join(', ')})`);
  return { kind, platformCode: required(flags, 'platform'), participantCode: required(flags, 'participant') };
}

/** Money in from outside, and the relationships that let a platform act for a participant. */
export const ledgerCommands: Commands = {
  deposit: {
    usage:
      'deposit --participant CODE --asset ASSET --amount AMOUNT --reference BANK_WIRE_ID [--account-group G] [--account-label L]',
    options: {
      participant: { type: 'string', required: true },
      asset: { type: 'string', required: true },
      amount: { type: 'string', required: true },
      reference: { type: 'string', required: true },
      'account-group': { type: 'string' },
      'account-label': { type: 'string' },
    },
    mutates: true,
    run: async (flags, ctx, audit) => {
      const label = optional(flags, 'account-label');
      const labelProblem = label === undefined ? undefined : accountLabelProblem('--account-label', label);
      if (labelProblem) throw new UsageError(labelProblem);
      const request = {
        participantCode: required(flags, 'participant'),
        asset: required(flags, 'asset'),
        amount: required(flags, 'amount'),
        reference: required(flags, 'reference'),
        accountGroup: optional(flags, 'account-group'),
        accountLabel: optional(flags, 'account-label'),
      };
      // The operator's record commits with the booking; a repeated reference books nothing and records nothing new.
      const booking = await deposit(ctx, request, {
        alongWith: [
          audit.item({
            reference: request.reference,
            participant_code: request.participantCode,
            asset: request.asset,
            amount: request.amount,
            account_group: request.accountGroup ?? null,
            account_label: request.accountLabel ?? null,
          }),
        ],
      });
      return booking;
    },
  },
  'relationship grant': {
    usage: `relationship grant ${RELATIONSHIP_FLAGS_USAGE}`,
    options: RELATIONSHIP_OPTIONS,
    mutates: true,
    run: async (flags, ctx, audit) => {
      const { kind, platformCode, participantCode } = relationshipFlags(flags);
      await grantRelationship(ctx, platformCode, kind, participantCode, {
        alongWith: [audit.item({ platform_code: platformCode, participant_code: participantCode, kind })],
      });
      return { platform_code: platformCode, participant_code: participantCode, kind, granted: true };
    },
  },
  'relationship revoke': {
    usage: `relationship revoke ${RELATIONSHIP_FLAGS_USAGE}`,
    options: RELATIONSHIP_OPTIONS,
    mutates: true,
    run: async (flags, ctx, audit) => {
      const { kind, platformCode, participantCode } = relationshipFlags(flags);
      // The grant's removal and the operator's record commit together; a grant that isn't there is a 404 (nothing recorded).
      await revokeRelationship(ctx, platformCode, kind, participantCode, {
        alongWith: [
          audit.item({ platform_code: platformCode, participant_code: participantCode, kind, revoked: true }),
        ],
      });
      return { platform_code: platformCode, participant_code: participantCode, kind, revoked: true };
    },
  },
};
