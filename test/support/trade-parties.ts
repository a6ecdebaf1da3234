import { ctx } from './context.js';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { participantEntity } from '../../lib/store/entities/participant.js';
import { customersViaStore } from './customers.js';

/**
 * A customer of `platformCode` made through the store's own creation path: trade tests need parties, not
 * the onboarding rules (those have their own tests through HTTP). `status` lets a test make a locked one;
 * nothing in the service changes a status yet, so the test sets it directly.
 */
export async function newCustomer(platformCode: string, status = 'approved'): Promise<string> {
  const [code] = await customersViaStore(platformCode, 1);
  if (status !== 'approved') {
    await ctx.db.send(
      new UpdateCommand({
        TableName: ctx.tables.main,
        Key: participantEntity.key({ participant_code: code! }),
        UpdateExpression: 'SET #status = :status',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':status': status },
      }),
    );
  }
  return code!;
}
