import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { NotFoundError } from '../domain/errors.js';
import { participantEntity } from './entities/participant.js';
import { platformEntity } from './entities/platform.js';
import { relationshipEntity, type RelationshipKind } from './entities/relationship.js';
import { transactWrite } from './table/transactions.js';
import { type TaggedItem, type TransactItem } from './table/transaction-items.js';
import type { AppContext } from '../context.js';

export { RELATIONSHIP_KINDS, type RelationshipKind } from './entities/relationship.js';

/**
 * Grants a platform a relationship with a participant (ops only). Granting twice is harmless. Both must
 * exist: the grant is one transaction with a check on the platform and on the participant (and `alongWith`,
 * the operator's audit record), so a mistyped code grants nothing.
 */
export async function grantRelationship(
  ctx: Pick<AppContext, 'clock' | 'db' | 'tables' | 'logger' | 'retry'>,
  platformCode: string,
  kind: RelationshipKind,
  participantCode: string,
  options: { alongWith?: readonly TaggedItem[] } = {},
): Promise<void> {
  const exists = { condition: 'attribute_exists(pk)' };
  await transactWrite(ctx, [
    {
      item: platformEntity.check(ctx.tables, { platform_code: platformCode }, exists),
      onConditionFailed: () => new NotFoundError(`platform ${platformCode} not found`),
    },
    {
      item: participantEntity.check(ctx.tables, { participant_code: participantCode }, exists),
      onConditionFailed: () => new NotFoundError(`participant ${participantCode} not found`),
    },
    {
      item: relationshipEntity.put(ctx.tables, {
        kind,
        platform_code: platformCode,
        participant_code: participantCode,
        granted_at: ctx.clock.nowMs(),
      }),
    },
    ...(options.alongWith ?? []),
  ]);
}

/**
 * Revokes a grant (ops only): the relationship's delete, conditioned on it existing (revoking what was never
 * granted is a 404, so a mistyped code says so), in one transaction with `alongWith` (the operator's audit
 * record). What the platform did under the grant stays booked; from the commit on, it may not act for the
 * participant again.
 */
export async function revokeRelationship(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  platformCode: string,
  kind: RelationshipKind,
  participantCode: string,
  options: { alongWith?: readonly TaggedItem[] } = {},
): Promise<void> {
  await transactWrite(ctx, [
    {
      item: relationshipEntity.delete(
        ctx.tables,
        { platform_code: platformCode, kind, participant_code: participantCode },
        { condition: 'attribute_exists(pk)' },
      ),
      onConditionFailed: () =>
        new NotFoundError(`no ${kind} relationship of platform ${platformCode} with participant ${participantCode}`),
    },
    ...(options.alongWith ?? []),
  ]);
}

export async function hasRelationship(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  platformCode: string,
  kind: RelationshipKind,
  participantCode: string,
): Promise<boolean> {
  const out = await ctx.db.send(
    new GetCommand(
      relationshipEntity.get(ctx.tables, { platform_code: platformCode, kind, participant_code: participantCode }),
    ),
  );
  // Parsed all the same: a grant that doesn't read as one is an error, never a permission.
  return out.Item !== undefined && relationshipEntity.parse(out.Item).kind === kind;
}

/** For a booking's transaction: the platform still holds the relationship (a revocation committed first refuses it). */
export function relationshipCheck(
  ctx: Pick<AppContext, 'tables'>,
  platformCode: string,
  kind: RelationshipKind,
  participantCode: string,
): TransactItem {
  return relationshipEntity.check(
    ctx.tables,
    { platform_code: platformCode, kind, participant_code: participantCode },
    { condition: 'attribute_exists(pk)' },
  );
}
