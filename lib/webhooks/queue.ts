import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import * as z from 'zod/mini';
import { formatIssues, messageId } from '../domain/validation.js';

/**
 * A delivery waiting to be tried: the worker claims it by these ids (ours, so at most 100 characters: a longer
 * one could only fail on DynamoDB's key size). `platformCode`, where the sender knows it, lets the worker read
 * the endpoint while it claims rather than after (the endpoint's key holds it); without it (the sweep's
 * messages) the worker reads it after the claim, from the delivery.
 */
const deliveryMessage = z.object(
  { eventId: messageId(), endpointId: messageId(), platformCode: z.optional(messageId()) },
  'must be an object',
);

export type DeliveryMessage = z.infer<typeof deliveryMessage>;

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

/**
 * The delivery a queue message asks for. A body that isn't one throws, naming what is wrong: the message is
 * reported failed, retried by SQS, and then dead-lettered.
 */
export function parseDeliveryMessage(body: string): DeliveryMessage {
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    throw new Error('not a delivery message (body: not JSON)');
  }
  const parsed = deliveryMessage.safeParse(message);
  if (!parsed.success)
    throw new Error(`not a delivery message (${formatIssues(parsed.error.issues, 'body').join('; ')})`);
  return parsed.data;
}
