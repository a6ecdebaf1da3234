import { SQSClient } from '@aws-sdk/client-sqs';
import type { AppContext } from '../context.js';
import { awsRequestHandler } from '../runtime/aws-clients.js';
import { sqsDeliveryQueue, type DeliveryQueue } from './queue.js';

/** The stack's delivery queue (WEBHOOK_QUEUE_URL), for the functions the stack gives it to; its client with every client's timeouts and attempts. */
export function queueFor(ctx: AppContext): DeliveryQueue {
  const url = ctx.config.WEBHOOK_QUEUE_URL;
  if (!url) throw new Error('invalid configuration: WEBHOOK_QUEUE_URL is not set on this function');
  return sqsDeliveryQueue(
    new SQSClient({
      region: ctx.config.AWS_REGION,
      maxAttempts: ctx.config.AWS_MAX_ATTEMPTS,
      requestHandler: awsRequestHandler(ctx.config, ctx.deadlines),
    }),
    url,
  );
}
