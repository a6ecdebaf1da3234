import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Logger } from '@aws-lambda-powertools/logger';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { Config } from '../config.js';
import { SERVICE_NAME } from '../observability/metric-names.js';
import { DeadlineExceededError, type Deadlines, MIN_ATTEMPT_MS } from './deadline.js';

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
 * The HTTP handler every AWS SDK client here uses (DynamoDB, Step Functions, KMS, SQS): bounded connect and
 * request timeouts (the SDK's defaults wait indefinitely for a stalled response), so a dead dependency surfaces as
 * a TimeoutError, which the error mapper answers with 503 and Retry-After. With the context's `deadlines`, each
 * attempt is also bounded by the invocation's deadline (`DeadlineHttpHandler`). One per client.
 */
export function awsRequestHandler(
  config: Pick<Config, 'AWS_CONNECT_TIMEOUT_MS' | 'AWS_REQUEST_TIMEOUT_MS' | 'AWS_MAX_SOCKETS'>,
  deadlines?: Deadlines,
): NodeHttpHandler {
  const agent = { keepAlive: true, maxSockets: config.AWS_MAX_SOCKETS };
  const options = {
    connectionTimeout: config.AWS_CONNECT_TIMEOUT_MS,
    requestTimeout: config.AWS_REQUEST_TIMEOUT_MS,
    throwOnRequestTimeout: true,
    httpAgent: agent,
    httpsAgent: agent,
  };
  return deadlines ? new DeadlineHttpHandler(deadlines, options) : new NodeHttpHandler(options);
}

type HandleArgs = Parameters<NodeHttpHandler['handle']>;

/**
 * Every SDK attempt passes here (the SDK's retries call the handler once per attempt), so the invocation's
 * deadline bounds them all: an attempt that could not finish before it is not started, and one in flight when
 * it comes is aborted. Either way the call fails with `DeadlineExceededError`, which the SDK does not retry.
 * An aborted write may still have been applied, as after any timeout: every write is conditioned, and a
 * request's claim is released only while it is still in progress (`lib/store/windows.ts`).
 */
export class DeadlineHttpHandler extends NodeHttpHandler {
  constructor(
    private readonly deadlines: Deadlines,
    options: ConstructorParameters<typeof NodeHttpHandler>[0],
  ) {
    super(options);
  }

  override async handle(request: HandleArgs[0], options: HandleArgs[1] = {}): ReturnType<NodeHttpHandler['handle']> {
    const remainingMs = this.deadlines.remainingMs();
    if (remainingMs === Number.POSITIVE_INFINITY) return super.handle(request, options);
    const what = `${request.headers['x-amz-target'] ?? request.hostname} attempt`;
    if (remainingMs < MIN_ATTEMPT_MS) throw new DeadlineExceededError(what);
    const atDeadline = AbortSignal.timeout(Math.floor(remainingMs));
    const callers = options.abortSignal as AbortSignal | undefined;
    const abortSignal = callers ? AbortSignal.any([callers, atDeadline]) : atDeadline;
    try {
      return await super.handle(request, { ...options, abortSignal });
    } catch (error) {
      if (atDeadline.aborted && !callers?.aborted) throw new DeadlineExceededError(what);
      throw error;
    }
  }
}

/**
 * The DynamoDB document client every store function uses, configured as in production: the configuration's
 * timeouts and attempts, each attempt bounded by the invocation's deadline (`awsRequestHandler`), wrapNumbers,
 * and undefined attributes dropped; captured by the tracer when one is given (X-Ray segments per call on Lambda).
 */
export function documentClient(
  config: AwsClientConfig & Pick<Config, 'DYNAMODB_ENDPOINT'>,
  tracer?: Tracer,
  deadlines?: Deadlines,
): DynamoDBDocumentClient {
  const base = new DynamoDBClient({
    region: config.AWS_REGION,
    maxAttempts: config.AWS_MAX_ATTEMPTS,
    requestHandler: awsRequestHandler(config, deadlines),
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
