import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { DynamoDBRecord, DynamoDBStreamEvent, SQSEvent, SQSRecord } from 'aws-lambda';
import type { AppContext } from '../context.js';
import { deliverOnce, type DeliveryDeps } from './deliver-webhook.js';
import { dispatch, endpointsPerBatch } from './dispatch-events.js';
import { parseDeliveryMessage, type DeliveryQueue } from './queue.js';
import { dispatchRequestOf, matchesDispatchFilter } from './stream-records.js';
import { sweepWebhooks } from './sweep-webhooks.js';

/**
 * The three webhook functions as Lambda handlers bound to a context. On AWS the stream, SQS and the schedule
 * invoke them; under `npm start` and in tests the local runtime calls the very same functions with
 * Lambda-shaped events.
 */

/**
 * Stream -> dispatcher. Records are reported failed one by one (Powertools' partial batch response): Lambda
 * retries from the first failure, bisecting the batch, and later records processed again are harmless.
 */
export function bindDispatcher(ctx: AppContext, queue: DeliveryQueue) {
  return async (event: DynamoDBStreamEvent) => {
    const processor = new BatchProcessor(EventType.DynamoDBStreams);
    const endpointsOf = endpointsPerBatch(ctx);
    const handleRecord = async (record: DynamoDBRecord) => {
      // The event source mapping filters already; a record that slips through is not ours to dispatch.
      if (!matchesDispatchFilter(record)) return;
      await dispatch(ctx, queue, dispatchRequestOf(record), endpointsOf);
    };
    return processPartialResponse(event, handleRecord, processor);
  };
}

/** SQS -> delivery worker: each message is one attempt; a message that throws is retried by SQS, then dead-lettered. */
export function bindDeliveryWorker(ctx: AppContext, deps: DeliveryDeps) {
  return async (event: SQSEvent) => {
    const processor = new BatchProcessor(EventType.SQS);
    const handleRecord = async (record: SQSRecord) => deliverOnce(ctx, deps, parseDeliveryMessage(record.body));
    return processPartialResponse(event, handleRecord, processor);
  };
}

/** Schedule -> sweep. */
export function bindWebhookSweep(ctx: AppContext, queue: DeliveryQueue) {
  return async () => sweepWebhooks(ctx, queue);
}
