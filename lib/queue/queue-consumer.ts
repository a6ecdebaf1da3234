import { processPartialResponse, SqsFifoPartialProcessorAsync } from '@aws-lambda-powertools/batch';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

/** What applying one event answers: a refused event carries its reasons. */
export type EventReply = { result: string; errors?: string[] };

/**
 * An SQS FIFO consumer for events from outside systems (the bank, the custodian), one message per event:
 * the message group is the payment or withdrawal, so one resource's events are applied in the order they
 * were sent. Each event is applied by `apply`, which is idempotent (a redelivered event is a no-op).
 *
 * - An event `apply` refuses (malformed, unknown resource, a move its state machine forbids) is logged at
 *   warn and dropped: redelivering it would never succeed.
 * - An event that throws (DynamoDB unavailable) is reported as a batch item failure, with the rest of its
 *   group, so SQS redelivers them in order; after the queue's receive limit they move to its dead-letter
 *   queue, which is alarmed. Other groups of the batch go on.
 */
export function queueConsumer(
  ctx: { logger: Logger },
  eventName: string,
  apply: (body: unknown) => Promise<EventReply>,
) {
  return async (event: SQSEvent, context?: Context): Promise<SQSBatchResponse> => {
    const applyRecord = async (record: SQSRecord) => {
      let body: unknown;
      try {
        body = JSON.parse(record.body);
      } catch {
        ctx.logger.warn(`${eventName} rejected`, { message_id: record.messageId, errors: ['body: not JSON'] });
        return;
      }
      const reply = await apply(body);
      if (reply.result === 'rejected')
        ctx.logger.warn(`${eventName} rejected`, { message_id: record.messageId, errors: reply.errors });
      else ctx.logger.info(`${eventName} ${reply.result}`, { message_id: record.messageId });
    };
    return processPartialResponse(event, applyRecord, new SqsFifoPartialProcessorAsync(), {
      ...(context && { context }),
      skipGroupOnError: true,
      // A batch in which every event failed is reported item by item too, never thrown as one error.
      throwOnFullBatchFailure: false,
    });
  };
}
