import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '../../lib/clock.js';
import { dynamo, tableNames } from '../../lib/store/client.js';
import { newParticipantCode } from '../../lib/store/codes.js';
import { keys } from '../../lib/store/keys.js';

/**
 * An approved customer of `platformCode`, written straight to the table: trade tests need parties, not the
 * onboarding rules (those have their own tests through HTTP). `status` lets a test make a locked one.
 */
export async function newCustomer(platformCode: string, status = 'approved'): Promise<string> {
  const code = newParticipantCode();
  const now = clock.nowMs();
  await dynamo().send(
    new PutCommand({
      TableName: tableNames().main,
      Item: {
        ...keys.participant(code),
        gsi1pk: keys.participantsOfPlatform(platformCode),
        gsi1sk: keys.participantSortKey(now, code),
        type: 'participant',
        participant_code: code,
        platform_code: platformCode,
        kind: 'customer',
        status,
        is_minor: false,
        created_at: now,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
  return code;
}
