import type { SQSRecord } from 'aws-lambda';

/** An SQS FIFO record as Lambda delivers it; only the fields the consumer reads matter. */
export function record(messageId: string, group: string, body: string): SQSRecord {
  return {
    messageId,
    receiptHandle: `handle-${messageId}`,
    body,
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: '1',
      SenderId: 'sender',
      ApproximateFirstReceiveTimestamp: '1',
      MessageGroupId: group,
      MessageDeduplicationId: messageId,
      SequenceNumber: '1',
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:events.fifo',
    awsRegion: 'us-east-1',
  };
}
