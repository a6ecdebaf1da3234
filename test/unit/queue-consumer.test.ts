import { Logger } from '@aws-lambda-powertools/logger';
import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { queueConsumer, type EventReply } from '../../lib/queue/queue-consumer.js';
import { record } from '../support/sqs.js';

const logger = new Logger({ logLevel: 'SILENT' });

describe('the event queue consumer', () => {
  it('applies events in order, drops refused ones, and reports a failure with the rest of its group only', async () => {
    const applied: string[] = [];
    const apply = async (body: unknown): Promise<EventReply> => {
      const { id } = body as { id: string };
      if (id === 'boom') throw new Error('DynamoDB unavailable');
      applied.push(id);
      return id.startsWith('bad') ? { result: 'rejected', errors: ['status: illegal move'] } : { result: 'applied' };
    };
    const event: SQSEvent = {
      Records: [
        record('m1', 'payment-a', JSON.stringify({ id: 'a1' })),
        record('m2', 'payment-b', JSON.stringify({ id: 'boom' })),
        record('m3', 'payment-a', JSON.stringify({ id: 'bad-a2' })),
        record('m4', 'payment-b', JSON.stringify({ id: 'b2' })),
        record('m5', 'payment-a', 'not json'),
        record('m6', 'payment-c', JSON.stringify({ id: 'c1' })),
      ],
    };
    const response = await queueConsumer({ logger }, 'test event', apply)(event);
    // m2 failed: it and the later m4 of its group come back for redelivery, in order; the other groups went on.
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'm2' }, { itemIdentifier: 'm4' }]);
    expect(applied).toEqual(['a1', 'bad-a2', 'c1']);
  });

  it('reports every message when all fail, instead of throwing the batch away', async () => {
    const event: SQSEvent = { Records: [record('m1', 'g', '{"id":"x"}'), record('m2', 'h', '{"id":"y"}')] };
    const response = await queueConsumer({ logger }, 'test event', async () => {
      throw new Error('down');
    })(event);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'm1' }, { itemIdentifier: 'm2' }]);
  });
});
