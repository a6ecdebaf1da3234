import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { applyBankEvent } from '../../lib/payments/apply-bank-event.js';
import { customerBody } from '../support/customers.js';
import { fund } from '../support/ledger.js';
import { setPrice } from '../support/pricing.js';
import { newPlatform, type TestPlatform } from '../support/service.js';
import { isTerminated, useTestWorkflows, tradeBody, waitForTrade } from '../support/trades.js';
import { ctx } from '../support/context.js';
import { achBuy } from '../support/payments.js';

/**
 * Every write path that creates a record writes its list entry and moves its counter:
 * each kind of record made through its API is found in its list, and the list's count moved by one.
 */

async function list(platform: TestPlatform, path: string) {
  const response = await platform.get(path);
  expect(response.status, response.text).toBe(200);
  return response.body as { message: any[]; count: number; next_cursor: string | null };
}

useTestWorkflows({ sessionSeconds: 1 });
beforeAll(async () => {
  await setPrice('LTC', 'USD', '100');
});

describe('write paths reach their lists and counts', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '10000');
    await fund(platform.participantCode, 'USD', '10000', 'ach_clearing');
  });

  it('POST /participants/customers/new: in GET /participants, count +1', async () => {
    const before = await list(platform, '/participants');
    const created = await platform.post('/participants/customers/new', customerBody());
    expect(created.status, created.text).toBe(201);
    const after = await list(platform, '/participants');
    expect(after.count).toBe(before.count + 1);
    expect(after.message.map((p) => p.participant_code)).toContain(created.body.message.participant_code);
  });

  it('POST /transfers: in GET /transfers, count +1; a first credit to a new label opens an account in GET /accounts, count +1', async () => {
    const [transfers, accounts] = await Promise.all([list(platform, '/transfers'), list(platform, '/accounts')]);
    const label = `l${randomUUID().slice(0, 8)}`;
    const created = await platform.post('/transfers', {
      from_participant_code: platform.participantCode,
      to_participant_code: platform.participantCode,
      to_account_label: label,
      asset: 'USD',
      amount: '5',
    });
    expect(created.status, created.text).toBe(201);
    const [transfersAfter, accountsAfter] = await Promise.all([
      list(platform, '/transfers'),
      list(platform, '/accounts'),
    ]);
    expect(transfersAfter.count).toBe(transfers.count + 1);
    expect(transfersAfter.message[0].id).toBe(created.body.message.id);
    expect(accountsAfter.count).toBe(accounts.count + 1);
    expect(accountsAfter.message.map((a) => a.account_label)).toContain(label);
    // A second credit to it opens nothing.
    await platform.post('/transfers', {
      from_participant_code: platform.participantCode,
      to_participant_code: platform.participantCode,
      to_account_label: label,
      asset: 'USD',
      amount: '6',
    });
    expect((await list(platform, '/accounts')).count).toBe(accounts.count + 1);
  });

  it('POST /liquidity/execute with ACH funding: the trade in GET /trades and the payment in GET /payments/status, counts +1, and a bank event moves the count by status', async () => {
    const [trades, payments, submitted] = await Promise.all([
      list(platform, '/trades'),
      list(platform, '/payments/status'),
      list(platform, '/payments/status?status=submitted'),
    ]);
    const { trade_id: tradeId } = await achBuy(platform, { total: '100' });
    const [tradesAfter, paymentsAfter] = await Promise.all([
      list(platform, '/trades'),
      list(platform, '/payments/status'),
    ]);
    expect(tradesAfter.count).toBe(trades.count + 1);
    expect(tradesAfter.message.map((t) => t.trade_id)).toContain(tradeId);
    expect((await list(platform, '/trades?trade_state=terminated')).message.map((t) => t.trade_id)).toContain(tradeId);
    expect(paymentsAfter.count).toBe(payments.count + 1);
    const payment = paymentsAfter.message.find((p) => p.trade_id === tradeId);
    expect(payment).toBeDefined();
    expect((await list(platform, '/payments/status?status=submitted')).count).toBe(submitted.count + 1);

    await applyBankEvent(ctx, { transaction_id: payment.transaction_id, status: 'pending' });
    expect((await list(platform, '/payments/status?status=submitted')).count).toBe(submitted.count);
    expect((await list(platform, '/payments/status?status=pending')).message.map((p) => p.transaction_id)).toContain(
      payment.transaction_id,
    );
    expect((await list(platform, '/payments/status')).count).toBe(payments.count + 1);
  });

  it('POST /trades: in GET /trades, and the counts by state follow its settlement', async () => {
    const [buyerResponse, sellerResponse] = await Promise.all([
      platform.post('/participants/customers/new', customerBody()),
      platform.post('/participants/customers/new', customerBody()),
    ]);
    const buyer = buyerResponse.body.message.participant_code;
    const seller = sellerResponse.body.message.participant_code;
    await Promise.all([fund(buyer, 'USD', '100000'), fund(seller, 'BTC', '1')]);
    const before = await Promise.all([list(platform, '/trades'), list(platform, '/trades?trade_state=terminated')]);
    const reported = await platform.post('/trades', tradeBody(platform, { buyer, seller }));
    expect(reported.status, reported.text).toBe(200);
    const tradeId = reported.body.message.trade_id;
    expect((await list(platform, '/trades')).count).toBe(before[0].count + 1);
    await waitForTrade(platform, tradeId, isTerminated);
    const terminated = await list(platform, '/trades?trade_state=terminated');
    expect(terminated.count).toBe(before[1].count + 1);
    expect(terminated.message.map((t) => t.trade_id)).toContain(tradeId);
    expect((await list(platform, '/trades?trade_state=accepted')).message.map((t) => t.trade_id)).not.toContain(
      tradeId,
    );
  });
});
