import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '../config.js';

/**
 * One document client per process. Numbers are read as `NumberValue` (wrapNumbers) so balances never pass
 * through a JS number; undefined attributes are dropped rather than rejected.
 */
let documentClient: DynamoDBDocumentClient | undefined;

export function dynamo(): DynamoDBDocumentClient {
  if (!documentClient) {
    const { DYNAMODB_ENDPOINT, AWS_REGION } = config();
    const base = new DynamoDBClient({
      region: AWS_REGION,
      maxAttempts: 5,
      ...(DYNAMODB_ENDPOINT && {
        endpoint: DYNAMODB_ENDPOINT,
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }),
    });
    documentClient = DynamoDBDocumentClient.from(base, {
      marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
      unmarshallOptions: { wrapNumbers: true },
    });
  }
  return documentClient;
}

/** Tests only: replace the client (e.g. one with a middleware that injects transaction conflicts). */
export function setDynamo(client: DynamoDBDocumentClient | undefined): void {
  documentClient = client;
}

export function tableNames() {
  const { TABLE_NAME, TTL_TABLE_NAME } = config();
  return { main: TABLE_NAME, ttl: TTL_TABLE_NAME };
}
