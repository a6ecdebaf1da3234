import { describe, expect, it } from 'vitest';
import { SETTLEMENT_STATE_NAMES as S } from '../../infra/settlement-workflow.js';
import { runAdmin } from '../../infra/ops/cli.js';
import { balances, fund } from '../support/ledger.js';
import { newPlatform, type TestPlatform } from '../support/service.js';
import { newCustomer } from '../support/trade-parties.js';
import { ctx } from '../support/context.js';
import { isTerminated, localRunner, useTestWorkflows, tradeBody, waitForTrade } from '../support/trades.js';

// Deadlines of a few seconds, so trades default in real time without moving the clock under other tests.
const SPOT_DEADLINE_SECONDS = 3;

useTestWorkflows({ sessionSeconds: 1, spotDeadlineSeconds: SPOT_DEADLINE_SECONDS });

async function market(): Promise<{ platform: TestPlatform; buyer: string; seller: string }> {
  const platform = await newPlatform();
  const [buyer, seller] = await Promise.all([newCustomer(platform.platformCode), newCustomer(platform.platformCode)]);
  return { platform, buyer, seller };
}

describe('settlement deadlines', () => {
  it('defaults a spot trade left unfunded past its deadline: balances untouched, the funded party counterparty_defaulted', async () => {
    const { platform, buyer, seller } = await market();
    await fund(seller, 'BTC', '1');
    await fund(buyer, 'USD', '10');
    const before = await balances(platform);
    const response = await platform.post(
      '/trades',
      tradeBody(platform, { buyer, seller, price: '100', quantity: '1' }),
    );
    expect(response.status).toBe(200);
    const accepted = response.body.message;

    const defaulted = await waitForTrade(platform, accepted.trade_id, isTerminated, 10_000);
    expect(defaulted).toMatchObject({
      trade_state: 'terminated',
      settlement_state: 'defaulted',
      settled_timestamp: null,
    });
    // It was outstanding first (the timestamps stay), with the seller ready and the buyer short; read from the
    // final trade rather than polled for, since the outstanding window is only as long as the deadline.
    expect(defaulted.obligations_outstanding_timestamp).toBeLessThan(defaulted.defaulted_timestamp);
    expect(defaulted.parties[0].obligations_outstanding_timestamp).toEqual(expect.any(Number));
    expect(defaulted.parties[0].current_obligations_met_timestamp).toBeNull();
    expect(defaulted.parties[1].current_obligations_met_timestamp).toEqual(expect.any(Number));
    expect(defaulted.defaulted_timestamp).toBeGreaterThanOrEqual(
      accepted.accepted_timestamp + SPOT_DEADLINE_SECONDS * 1000,
    );
    expect(defaulted.parties.map((p: any) => p.settlement_state)).toEqual(['defaulted', 'counterparty_defaulted']);
    expect(await balances(platform)).toEqual(before);

    expect(await localRunner()!.finished(accepted.trade_id)).toBe('SUCCEEDED');
    const shown = (await runAdmin(['trade', 'history', '--trade-id', accepted.trade_id], { ctx })) as any;
    const states = shown.executions[0].transitions.map((t: any) => t.state);
    expect(states.slice(-3)).toEqual([S.pastDeadline, S.defaultTrade, S.done]);
    expect(shown.executions[0].transitions.find((t: any) => t.state === S.defaultTrade).outcome).toBe('defaulted');
  });

  it('defaults a forward at its expiry_timestamp', async () => {
    const { platform, buyer, seller } = await market();
    // Far enough ahead that a slow POST still arrives before it (an expiry already past is a 400).
    const expiry = ctx.clock.nowMs() + 3_000;
    const body = tradeBody(platform, {
      buyer,
      seller,
      overrides: { product_type: 'forward', settlement_price_index_id: 'BTCUSD-FIX', expiry_timestamp: expiry },
    });
    const response = await platform.post('/trades', body);
    expect(response.status).toBe(200);
    const defaulted = await waitForTrade(platform, response.body.message.trade_id, isTerminated, 10_000);
    expect(defaulted.settlement_state).toBe('defaulted');
    expect(defaulted.defaulted_timestamp).toBeGreaterThanOrEqual(expiry);
    // Neither side delivered: both defaulted.
    expect(defaulted.parties.map((p: any) => p.settlement_state)).toEqual(['defaulted', 'defaulted']);
  });

  it('waits for settlement_timestamp before the first attempt', async () => {
    const { platform, buyer, seller } = await market();
    await fund(buyer, 'USD', '100');
    await fund(seller, 'BTC', '1');
    const settleAt = ctx.clock.nowMs() + 2_000;
    const response = await platform.post(
      '/trades',
      tradeBody(platform, {
        buyer,
        seller,
        price: '100',
        quantity: '1',
        overrides: { settlement_timestamp: settleAt },
      }),
    );
    const tradeId = response.body.message.trade_id;
    // Funded from the start, so an attempt before settleAt would have settled then: the settlement time is the proof.
    const settled = await waitForTrade(platform, tradeId, isTerminated, 10_000);
    expect(settled.settlement_state).toBe('settled');
    expect(settled.settled_timestamp).toBeGreaterThanOrEqual(settleAt);
  });
});
