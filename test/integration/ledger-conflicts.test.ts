import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { serviceWith } from '../support/faults.js';
import { lostAnswer } from '../support/raw-response.js';
import { fund, transferBody, usdBalancesOf } from '../support/ledger.js';
import { newPlatform, type TestPlatform } from '../support/service.js';

/**
 * DynamoDB Local never reports transaction conflicts, so these tests put a middleware on the client that
 * does what DynamoDB does under contention: cancel the first N TransactWriteItems calls.
 */
function serviceInjecting(fault: { conflicts?: number; lostResponses?: number }) {
  const calls = { transactions: 0 };
  const via = serviceWith(
    (next, context) => async (args) => {
      if (context.commandName !== 'TransactWriteItemsCommand') return next(args);
      calls.transactions++;
      if ((fault.conflicts ?? 0) > 0) {
        fault.conflicts!--;
        throw new TransactionCanceledException({
          message:
            'Transaction cancelled, please refer cancellation reasons for specific reasons [TransactionConflict]',
          $metadata: {},
          CancellationReasons: [{ Code: 'TransactionConflict' }],
        });
      }
      const result = await next(args);
      if ((fault.lostResponses ?? 0) > 0) {
        // The write committed but the answer never arrived; the SDK retries the very same request.
        fault.lostResponses!--;
        throw lostAnswer(result);
      }
      return result;
    },
    'injectTransactionFaults',
  );
  return { calls, via };
}

const body = (platform: TestPlatform, amount: string) => transferBody(platform, { to_account_label: 'other', amount });

describe('transaction conflicts', () => {
  it('retries a conflicted transaction a bounded number of times and books it once', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '10');
    // The receiving account exists already: opening one takes one more attempt of its own (its count moves).
    await fund(platform.participantCode, 'USD', '1', 'other');
    const { calls, via } = serviceInjecting({ conflicts: 3 });
    const response = await platform.post('/transfers', body(platform, '4'), { via });
    expect(response.status).toBe(201);
    expect(calls.transactions).toBe(4);
    expect(await usdBalancesOf(platform, 'general', 'other')).toEqual(['6.00', '5.00']);
  });

  it('gives up after five attempts with a 503 the client may retry, having moved nothing', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '10');
    const { calls, via } = serviceInjecting({ conflicts: 50 });
    const response = await platform.post('/transfers', body(platform, '4'), { via });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBeTruthy();
    expect(calls.transactions).toBe(5);
    expect(await usdBalancesOf(platform, 'general')).toEqual(['10.00']);
  });

  it('does not book twice when a committed transaction’s response is lost and the SDK retries it', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '10');
    const { calls, via } = serviceInjecting({ lostResponses: 1 });
    const response = await platform.post('/transfers', body(platform, '4'), { via });
    expect(response.status).toBe(201);
    expect(calls.transactions).toBeGreaterThanOrEqual(2);
    expect(await usdBalancesOf(platform, 'general', 'other')).toEqual(['6.00', '4.00']);
  });
});

describe('an idempotent POST whose fallback response write fails after its booking committed', () => {
  it('still answers the booking (its answer was stored with it), and a retry gets the same, never a second transfer', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '10');
    // Fail the middleware's own response write: the booking's transaction stored the answer already.
    const via = serviceWith(
      (next, context) => async (args) => {
        const input = args.input as { UpdateExpression?: string; TransactItems?: unknown };
        if (context.commandName === 'UpdateItemCommand' && input.UpdateExpression?.includes(':completed')) {
          throw Object.assign(new Error('service unavailable'), { name: 'InternalServerError', $metadata: {} });
        }
        return next(args);
      },
      'failResponseRecording',
    );

    const requestId = crypto.randomUUID();
    const first = await platform.post('/transfers', body(platform, '4'), {
      headers: { 'X-Request-Id': requestId },
      via,
    });
    expect(first.status).toBe(201);
    const retry = await platform.post('/transfers', body(platform, '4'), { headers: { 'X-Request-Id': requestId } });
    expect(retry.status).toBe(201);
    expect(retry.text).toBe(first.text);
    expect(await usdBalancesOf(platform, 'general', 'other')).toEqual(['6.00', '4.00']);
  });
});
