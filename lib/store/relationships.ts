import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '../clock.js';
import { dynamo, tableNames } from './client.js';
import { keys } from './keys.js';

export const RELATIONSHIP_KINDS = ['submits_platform_transfers_for'] as const;
export type RelationshipKind = (typeof RELATIONSHIP_KINDS)[number];

/** Grants a platform a relationship with a participant (ops only). Granting twice is harmless. */
export async function grantRelationship(platformCode: string, kind: RelationshipKind, participantCode: string): Promise<void> {
  await dynamo().send(
    new PutCommand({
      TableName: tableNames().main,
      Item: { ...keys.relationship(platformCode, kind, participantCode), type: 'relationship', kind, platform_code: platformCode, participant_code: participantCode, granted_at: clock.nowMs() },
    }),
  );
}

export async function hasRelationship(platformCode: string, kind: RelationshipKind, participantCode: string): Promise<boolean> {
  const out = await dynamo().send(new GetCommand({ TableName: tableNames().main, Key: keys.relationship(platformCode, kind, participantCode) }));
  return Boolean(out.Item);
}
