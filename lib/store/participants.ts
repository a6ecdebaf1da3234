import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableNames } from './client.js';
import { keys } from './keys.js';

export type ParticipantKind = 'platform' | 'customer';

export interface Participant {
  participant_code: string;
  platform_code: string;
  kind: ParticipantKind;
  status: string;
  /** Customers only: true for a minor (a minor can never be a custodian). */
  is_minor?: boolean;
  item: Record<string, unknown>;
}

export async function getParticipant(participantCode: string): Promise<Participant | undefined> {
  const out = await dynamo().send(new GetCommand({ TableName: tableNames().main, Key: keys.participant(participantCode) }));
  const item = out.Item;
  if (!item) return undefined;
  return {
    participant_code: item.participant_code,
    platform_code: item.platform_code,
    kind: item.kind,
    status: item.status,
    is_minor: item.is_minor,
    item,
  };
}

/** A participant the platform may act for: itself or one of its customers. Anything else is invisible. */
export async function getParticipantOfPlatform(platformCode: string, participantCode: string): Promise<Participant | undefined> {
  const participant = await getParticipant(participantCode);
  return participant && participant.platform_code === platformCode ? participant : undefined;
}
