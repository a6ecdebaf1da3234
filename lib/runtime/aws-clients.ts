import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Logger } from '@aws-lambda-powertools/logger';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { Config } from '../config.js';
import { SERVICE_NAME } from '../observability/metric-names.js';

/**
 * The clients the service talks to AWS with, built here and nowhere else: every one with the configuration's
 * connect and request timeouts and attempts.
 */

/** What the SDK clients' timeouts and retries are built from. */
export type AwsClientConfig = Pick<
  Config,
  'AWS_REGION' | 'AWS_CONNECT_TIMEOUT_MS' | 'AWS_REQUEST_TIMEOUT_MS' | 'AWS_MAX_ATTEMPTS' | 'AWS_MAX_SOCKETS'
>;

/**
 * The HTTP handler every AWS SDK client here uses (DynamoDB and Step Functions): bounded connect and request
 * timeouts (the SDK's defaults wait indefinitely for a stalled response), so a dead dependency surfaces as a
 * TimeoutError, which the error mapper answers with 503 and Retry-After. One per client.
 */
export function awsRequestHandler(
  config: Pick<Config, 'AWS_CONNECT_TIMEOUT_MS' | 'AWS_REQUEST_TIMEOUT_MS' | 'AWS_MAX_SOCKETS'>,
): NodeHttpHandler {
  const agent = { keepAlive: true, maxSockets: config.AWS_MAX_SOCKETS };
  return new NodeHttpHandler({
    connectionTimeout: config.AWS_CONNECT_TIMEOUT_MS,
    requestTimeout: config.AWS_REQUEST_TIMEOUT_MS,
    throwOnRequestTimeout: true,
    httpAgent: agent,
    httpsAgent: agent,
  });
}

/**
 * The DynamoDB document client every store function uses, configured as in production: the configuration's
 * timeouts and attempts (`awsRequestHandler`), wrapNumbers, and undefined attributes dropped; captured by the
 * tracer when one is given (X-Ray segments per call on Lambda).
 */
export function documentClient(
  config: AwsClientConfig & Pick<Config, 'DYNAMODB_ENDPOINT'>,
  tracer?: Tracer,
): DynamoDBDocumentClient {
  const base = new DynamoDBClient({
    region: config.AWS_REGION,
    maxAttempts: config.AWS_MAX_ATTEMPTS,
    requestHandler: awsRequestHandler(config),
    ...(config.DYNAMODB_ENDPOINT && {
      endpoint: config.DYNAMODB_ENDPOINT,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }),
  });
  return wrapDocumentClient(tracer ? tracer.captureAWSv3Client(base) : base);
}

/** Wraps a low-level client (a test's, with fault-injecting middleware) the way the service reads and writes. */
export function wrapDocumentClient(base: DynamoDBClient): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(base, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
    unmarshallOptions: { wrapNumbers: true },
  });
}

/** A Powertools Logger at the configured level (`silent` included); POWERTOOLS_* variables still apply. */
export function serviceLogger(config: Pick<Config, 'LOG_LEVEL'>): Logger {
  return new Logger({ serviceName: SERVICE_NAME, logLevel: config.LOG_LEVEL.toUpperCase() as 'INFO' });
}
