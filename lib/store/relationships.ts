import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { NotFoundError } from '../domain/errors.js';
import { keys } from './keys.js';
import { transactWrite } from './table/transactions.js';
import { type TaggedItem } from './table/transaction-items.js';
import type { AppContext } from '../context.js';

export const RELATIONSHIP_KINDS = ['submits_platform_transfers_for'] as const;
export type RelationshipKind = (typeof RELATIONSHIP_KINDS)[number];

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
  const table = ctx.tables.main;
  const exists = (key: { pk: string; sk: string }, what: string): TaggedItem => ({
    item: { ConditionCheck: { TableName: table, Key: key, ConditionExpression: 'attribute_exists(pk)' } },
    onConditionFailed: () => new NotFoundError(`${what} not found`),
  });
  await transactWrite(ctx, [
    exists(keys.platform(platformCode), `platform ${platformCode}`),
    exists(keys.participant(participantCode), `participant ${participantCode}`),
    {
      item: {
        Put: {
          TableName: table,
          Item: {
            ...keys.relationship(platformCode, kind, participantCode),
            type: 'relationship',
            kind,
            platform_code: platformCode,
            participant_code: participantCode,
            granted_at: ctx.clock.nowMs(),
          },
        },
      },
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
      item: {
        Delete: {
          TableName: ctx.tables.main,
          Key: keys.relationship(platformCode, kind, participantCode),
          ConditionExpression: 'attribute_exists(pk)',
        },
      },
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
    new GetCommand({ TableName: ctx.tables.main, Key: keys.relationship(platformCode, kind, participantCode) }),
  );
  return Boolean(out.Item);
}
