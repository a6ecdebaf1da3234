import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';

/** A delivery waiting to be tried: the worker claims it by these ids. */
export interface DeliveryMessage {
  eventId: string;
  endpointId: string;
}

/**
 * Where deliveries wait for the worker: SQS on AWS, an in-process queue under `npm start` and in tests.
 * `delaySeconds` is at most SQS's 15 minutes; later retries wait in the due index for the sweep.
 */
export interface DeliveryQueue {
  send(messages: readonly DeliveryMessage[], delaySeconds?: number): Promise<void>;
}

export const MAX_QUEUE_DELAY_SECONDS = 900;

/** The SQS queue of the stack; messages go in batches of ten, SQS's maximum. */
export function sqsDeliveryQueue(client: SQSClient, queueUrl: string): DeliveryQueue {
  return {
    async send(messages, delaySeconds = 0) {
      for (let start = 0; start < messages.length; start += 10) {
        const batch = messages.slice(start, start + 10);
        const out = await client.send(
          new SendMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: batch.map((message, i) => ({
              Id: String(i),
              MessageBody: JSON.stringify(message),
              DelaySeconds: Math.min(Math.max(0, Math.ceil(delaySeconds)), MAX_QUEUE_DELAY_SECONDS),
            })),
          }),
        );
        // A refused entry is not lost (its delivery is in the due index), but the sweep would find it late.
        if (out.Failed?.length) throw new Error(`SQS refused ${out.Failed.length} delivery messages`);
      }
    },
  };
}

export function parseDeliveryMessage(body: string): DeliveryMessage {
  const parsed = JSON.parse(body) as Partial<DeliveryMessage>;
  if (typeof parsed.eventId !== 'string' || typeof parsed.endpointId !== 'string')
    throw new Error('not a delivery message');
  return { eventId: parsed.eventId, endpointId: parsed.endpointId };
}
