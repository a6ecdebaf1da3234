import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '../clock.js';
import { NotFoundError } from '../domain/errors.js';
import { dynamo, tableNames } from './client.js';
import { keys } from './keys.js';
import { transactWrite, type TaggedItem } from './transactions.js';

export const RELATIONSHIP_KINDS = ['submits_platform_transfers_for'] as const;
export type RelationshipKind = (typeof RELATIONSHIP_KINDS)[number];

/**
 * Grants a platform a relationship with a participant (ops only). Granting twice is harmless. Both must
 * exist: the grant is one transaction with a check on the platform and on the participant (and `alongWith`,
 * the operator's audit record), so a mistyped code grants nothing.
 */
export async function grantRelationship(
  platformCode: string,
  kind: RelationshipKind,
  participantCode: string,
  options: { alongWith?: readonly TaggedItem[] } = {},
): Promise<void> {
  const table = tableNames().main;
  const exists = (key: { pk: string; sk: string }, what: string): TaggedItem => ({
    item: { ConditionCheck: { TableName: table, Key: key, ConditionExpression: 'attribute_exists(pk)' } },
    onConditionFailed: () => new NotFoundError(`${what} not found`),
  });
  await transactWrite([
    exists(keys.platform(platformCode), `platform ${platformCode}`),
    exists(keys.participant(participantCode), `participant ${participantCode}`),
    {
      item: {
        Put: {
          TableName: table,
          Item: { ...keys.relationship(platformCode, kind, participantCode), type: 'relationship', kind, platform_code: platformCode, participant_code: participantCode, granted_at: clock.nowMs() },
        },
      },
    },
    ...(options.alongWith ?? []),
  ]);
}

export async function hasRelationship(platformCode: string, kind: RelationshipKind, participantCode: string): Promise<boolean> {
  const out = await dynamo().send(new GetCommand({ TableName: tableNames().main, Key: keys.relationship(platformCode, kind, participantCode) }));
  return Boolean(out.Item);
}
