import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { config } from '../config.js';

/**
 * One document client per process. Numbers are read as `NumberValue` (wrapNumbers) so balances never pass
 * through a JS number; undefined attributes are dropped rather than rejected.
 */
let documentClient: DynamoDBDocumentClient | undefined;

export function dynamo(): DynamoDBDocumentClient {
  if (!documentClient) {
    const { DYNAMODB_ENDPOINT, AWS_REGION, AWS_MAX_ATTEMPTS } = config();
    const base = new DynamoDBClient({
      region: AWS_REGION,
      maxAttempts: AWS_MAX_ATTEMPTS,
      requestHandler: awsRequestHandler(),
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

/**
 * The HTTP handler every AWS SDK client here uses: bounded connect and request timeouts (the SDK's
 * defaults wait indefinitely for a stalled response), so a dead dependency surfaces as a TimeoutError,
 * which the error mapper answers with 503 and Retry-After.
 */
export function awsRequestHandler(): NodeHttpHandler {
  const { AWS_CONNECT_TIMEOUT_MS, AWS_REQUEST_TIMEOUT_MS } = config();
  return new NodeHttpHandler({
    connectionTimeout: AWS_CONNECT_TIMEOUT_MS,
    requestTimeout: AWS_REQUEST_TIMEOUT_MS,
    throwOnRequestTimeout: true,
  });
}

/** Tests only: replace the client (e.g. one with a middleware that injects transaction conflicts). */
export function setDynamo(client: DynamoDBDocumentClient | undefined): void {
  documentClient = client;
}

export function tableNames() {
  const { TABLE_NAME, TTL_TABLE_NAME } = config();
  return { main: TABLE_NAME, ttl: TTL_TABLE_NAME };
}
