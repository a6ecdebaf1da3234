import { Logger } from '@aws-lambda-powertools/logger';
import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import type { AppContext } from '../../lib/context.js';
import { replyToBankEvent } from '../../lib/payments/apply-bank-event.js';
import { queueConsumer, type EventReply } from '../../lib/queue/queue-consumer.js';
import { replyToCustodyEvent } from '../../lib/withdrawals/apply-custody-event.js';
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

  it('drops a malformed bank or custody event with a warning naming what is wrong, not retrying it', async () => {
    const warned = new Logger({ logLevel: 'SILENT' });
    const warn = vi.spyOn(warned, 'warn');
    // No table: a malformed event is refused before anything is read.
    const ctx = { logger: warned } as AppContext;
    const bank = queueConsumer(ctx, 'bank event', (body) => replyToBankEvent(ctx, body));
    const custody = queueConsumer(ctx, 'custody event', (body) => replyToCustodyEvent(ctx, body));
    const bankReply = await bank({
      Records: [
        record('m1', 'p1', JSON.stringify({ transaction_id: 'p1' })),
        record('m2', 'p2', JSON.stringify([{ transaction_id: 'p2', status: 'posted' }])),
        record('m3', 'p3', JSON.stringify({ transaction_id: 'x'.repeat(101), status: 'posted' })),
      ],
    });
    const custodyReply = await custody({
      Records: [
        record('m4', 'w1', JSON.stringify({ withdrawal_request_id: 'w1', status: 'CONFIRMED', transaction_hash: '' })),
      ],
    });
    expect(bankReply.batchItemFailures).toEqual([]);
    expect(custodyReply.batchItemFailures).toEqual([]);
    expect(warn.mock.calls).toEqual([
      ['bank event rejected', { message_id: 'm1', errors: ['status: must be a non-empty string'] }],
      [
        'bank event rejected',
        {
          message_id: 'm2',
          errors: ['transaction_id: must be a non-empty string', 'status: must be a non-empty string'],
        },
      ],
      ['bank event rejected', { message_id: 'm3', errors: ['transaction_id: at most 100 characters'] }],
      [
        'custody event rejected',
        { message_id: 'm4', errors: ['transaction_hash: must be a non-empty string of at most 200 characters'] },
      ],
    ]);
  });
});
