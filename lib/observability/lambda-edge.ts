import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';

export interface Observability {
  logger: Logger;
  metrics: Metrics;
  tracer: Tracer;
}

/**
 * Powertools at the edge of every Lambda function (design section 10), through its middy middlewares:
 * the tracer opens the invocation's subsegment (the SDK clients in the context are captured, so each
 * DynamoDB, KMS, SQS and Step Functions call shows under it), the logger adds the Lambda context (function,
 * its request id, cold start) to every line and drops keys a previous invocation added, and the metrics
 * record the cold start and publish whatever is stored when the invocation ends.
 *
 * The tracer records no response: a response body holds account balances and personal data.
 */
export function withPowertools<E, R>(handler: (event: E, context: Context) => Promise<R> | R, tools: Observability) {
  return middy(handler)
    .use(captureLambdaHandler(tools.tracer, { captureResponse: false }))
    .use(injectLambdaContext(tools.logger, { resetKeys: true }))
    .use(logMetrics(tools.metrics, { captureColdStartMetric: true }));
}
