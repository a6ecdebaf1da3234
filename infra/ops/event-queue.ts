import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';

/**
 * Against a deployed stack the ops CLI hands bank and custody events to the same SQS FIFO queue the
 * integrations use (the stack's `BankEventsQueueUrl` / `CustodyEventsQueueUrl` outputs, given as
 * BANK_EVENTS_QUEUE_URL / CUSTODY_EVENTS_QUEUE_URL), so a replayed event is ordered with the real ones of
 * its payment or withdrawal and applied by the same function. Without the variable (`npm start`, or
 * straight against tables) the command applies the event itself.
 */
export const EVENT_QUEUE_VARIABLES = { bank: 'BANK_EVENTS_QUEUE_URL', custody: 'CUSTODY_EVENTS_QUEUE_URL' } as const;

export function eventQueueUrl(kind: keyof typeof EVENT_QUEUE_VARIABLES): string | undefined {
  return process.env[EVENT_QUEUE_VARIABLES[kind]] || undefined;
}

/** Sends one event, grouped by the resource it moves; content-based deduplication drops an identical resend. */
export async function queueEvent(
  queueUrl: string,
  groupId: string,
  event: object,
): Promise<{ queued: true; queue_url: string; message_id: string | undefined }> {
  const client = new SQSClient({});
  try {
    const sent = await client.send(
      new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(event), MessageGroupId: groupId }),
    );
    return { queued: true, queue_url: queueUrl, message_id: sent.MessageId };
  } finally {
    client.destroy();
  }
}
