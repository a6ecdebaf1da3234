import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';

interface Observability {
  logger: Logger;
  metrics: Metrics;
  /** Present when tracing is on (`TRACING=active`). */
  tracer?: Tracer;
}

/**
 * The Powertools Tracer, imported only here and only when tracing is on: importing the X-Ray SDK beneath it
 * installs an async hook that slows every promise of the process (see TRACING in `lib/config.ts`). Its middy
 * middleware (`withPowertools`) is loaded at the same time, not with the function's code: with tracing off it
 * is never used, and it brings a copy of Powertools' commons (about 3 KiB) that every cold start would compile.
 */
export async function loadTracer(serviceName: string): Promise<Tracer> {
  const [{ Tracer }] = await Promise.all([
    import('@aws-lambda-powertools/tracer'),
    import('@aws-lambda-powertools/tracer/middleware'),
  ]);
  return new Tracer({ serviceName });
}

/**
 * Powertools at the edge of every Lambda function, through its middy middlewares:
 * the tracer opens the invocation's subsegment (the SDK clients in the context are captured, so each
 * DynamoDB, KMS, SQS and Step Functions call shows under it), the logger adds the Lambda context (function,
 * its request id, cold start) to every line and drops keys a previous invocation added, and the metrics
 * record the cold start and publish whatever is stored when the invocation ends.
 *
 * The tracer records no response: a response body holds account balances and personal data.
 */
export async function withPowertools<E, R>(
  handler: (event: E, context: Context) => Promise<R> | R,
  tools: Observability,
) {
  const traced = middy(handler);
  if (tools.tracer) {
    // Already loaded by `loadTracer`, which made the tracer.
    const { captureLambdaHandler } = await import('@aws-lambda-powertools/tracer/middleware');
    traced.use(captureLambdaHandler(tools.tracer, { captureResponse: false }));
  }
  return traced
    .use(injectLambdaContext(tools.logger, { resetKeys: true }))
    .use(logMetrics(tools.metrics, { captureColdStartMetric: true }));
}
