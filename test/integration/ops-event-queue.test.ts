import { createHash, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '../../infra/ops/cli.js';
import { auditLog } from '../../lib/store/audit.js';
import { ctx } from '../support/context.js';

/**
 * Against a deployed stack, `payment event` and `withdrawal event` go to the same SQS FIFO queue as the
 * integrations. A local HTTP endpoint stands in for SQS (the SDK sends to the queue URL's host): what is
 * asserted is the request the CLI really sends, and that nothing was applied locally.
 */
const received: { target: string | undefined; body: Record<string, unknown> }[] = [];
let server: Server;
let endpoint: string;
const saved = { ...process.env };

beforeAll(async () => {
  server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk) => (text += chunk));
    request.on('end', () => {
      const body = JSON.parse(text) as Record<string, unknown>;
      received.push({ target: request.headers['x-amz-target'] as string | undefined, body });
      response.setHeader('content-type', 'application/x-amz-json-1.0');
      // The SDK checks the body's MD5 as SQS reports it.
      response.end(
        JSON.stringify({
          MessageId: `msg-${received.length}`,
          MD5OfMessageBody: createHash('md5').update(String(body.MessageBody)).digest('hex'),
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  Object.assign(process.env, {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_ENDPOINT_URL_SQS: endpoint,
  });
});
afterEach(() => {
  received.length = 0;
  delete process.env.BANK_EVENTS_QUEUE_URL;
  delete process.env.CUSTODY_EVENTS_QUEUE_URL;
});
afterAll(async () => {
  for (const name of ['AWS_REGION', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_ENDPOINT_URL_SQS']) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
  await new Promise((resolve) => server.close(resolve));
});

describe('the ops CLI against deployed event queues', () => {
  it('sends a bank event to the bank events queue, grouped by payment, instead of applying it', async () => {
    const queueUrl = `${endpoint}/123456789012/BankEventsQueue.fifo`;
    process.env.BANK_EVENTS_QUEUE_URL = queueUrl;
    // An unknown payment: applied locally this would be refused; queued, the function decides.
    const transactionId = randomUUID();
    const since = ctx.clock.nowMs();
    const result = await runAdmin(
      ['payment', 'event', '--transaction-id', transactionId, '--status', 'posted', '--reason', 'bank replay'],
      { ctx },
    );
    expect(result).toEqual({ queued: true, queue_url: queueUrl, message_id: 'msg-1' });
    // The operator's record says what was sent and which message it became.
    const entries = (await auditLog(ctx, since)).filter((entry) => entry.changes.transaction_id === transactionId);
    expect(entries.map(({ reason, changes }) => ({ reason, changes }))).toEqual([
      {
        reason: 'bank replay',
        changes: {
          transaction_id: transactionId,
          status: 'posted',
          queued: { queued: true, queue_url: queueUrl, message_id: 'msg-1' },
        },
      },
    ]);
    expect(received).toEqual([
      {
        target: 'AmazonSQS.SendMessage',
        body: {
          QueueUrl: queueUrl,
          MessageBody: JSON.stringify({ transaction_id: transactionId, status: 'posted' }),
          MessageGroupId: transactionId,
        },
      },
    ]);
  });

  it('sends a custody event to the custody events queue, grouped by withdrawal', async () => {
    const queueUrl = `${endpoint}/123456789012/CustodyEventsQueue.fifo`;
    process.env.CUSTODY_EVENTS_QUEUE_URL = queueUrl;
    const id = randomUUID();
    await runAdmin(
      [
        'withdrawal',
        'event',
        '--id',
        id,
        '--status',
        'CONFIRMED',
        '--transaction-hash',
        '0xabc',
        '--reason',
        'custody replay',
      ],
      { ctx },
    );
    expect(received.map(({ body }) => body)).toEqual([
      {
        QueueUrl: queueUrl,
        MessageBody: JSON.stringify({ withdrawal_request_id: id, status: 'CONFIRMED', transaction_hash: '0xabc' }),
        MessageGroupId: id,
      },
    ]);
  });

  it('applies the event itself when no queue is configured (npm start)', async () => {
    await expect(
      runAdmin(['payment', 'event', '--transaction-id', randomUUID(), '--status', 'posted', '--reason', 'r'], { ctx }),
    ).rejects.toThrow(/payment not found/);
    expect(received).toEqual([]);
  });
});
