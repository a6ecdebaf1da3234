import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '../../lib/config.js';
import { setDynamo } from '../../lib/store/client.js';

/**
 * A process that dies right after a transaction committed, before anything else happens: after `skip`
 * TransactWriteItems calls go through, the next one reaches DynamoDB and commits, then the caller gets an
 * error instead of the answer (at the SDK's outermost step, so its retries can't hide it). Returns the undo.
 */
export function crashAfterCommit(options: { skip?: number } = {}): () => void {
  const base = new DynamoDBClient({
    region: 'us-east-1',
    endpoint: config().DYNAMODB_ENDPOINT,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  let skip = options.skip ?? 0;
  let left = 1;
  base.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      if (context.commandName === 'TransactWriteItemsCommand' && left > 0) {
        if (skip-- > 0) return result;
        left--;
        throw Object.assign(new Error('the process died after its transaction committed'), { name: 'CrashAfterCommit' });
      }
      return result;
    },
    { step: 'initialize', name: 'crashAfterCommit' },
  );
  setDynamo(DynamoDBDocumentClient.from(base, { marshallOptions: { removeUndefinedValues: true }, unmarshallOptions: { wrapNumbers: true } }));
  return () => setDynamo(undefined);
}
