import { describe, expect, it } from 'vitest';
import { runsAs } from '../support/functions.js';
import { GetCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { validateTradeReport } from '../../lib/domain/trade-report.js';
import { SETTLEMENT_STATE_NAMES as S } from '../../infra/settlement-workflow.js';
import { LocalSettlementRunner, resumeOpenTrades } from '../../infra/local/workflow-runner.js';
import { runAdmin } from '../../infra/ops/cli.js';
import { bind as bindActivateModule } from '../../functions/settlement/activate-trade.js';
const bindActivate = runsAs('functions/settlement/activate-trade.ts', bindActivateModule);
import { bind as bindAttemptModule } from '../../functions/settlement/attempt-settlement.js';
const bindAttempt = runsAs('functions/settlement/attempt-settlement.ts', bindAttemptModule);
import { bind as bindDefaultModule } from '../../functions/settlement/default-trade.js';
const bindDefault = runsAs('functions/settlement/default-trade.ts', bindDefaultModule);
import type { AppContext } from '../../lib/context.js';
import { settlementInputFor } from '../../lib/settlement/start-settlement.js';
import { newId } from '../../lib/store/codes.js';
import { movementEntity } from '../../lib/store/entities/ledger.js';
import { balanceOf } from '../../lib/store/ledger.js';
import { bookMovement } from '../../lib/ledger/engine.js';
import { Money } from '../../lib/domain/money.js';
import { moveLegs, SYSTEM_PARTICIPANTS, systemAccount } from '../../lib/domain/ledger.js';
import { settlementHistory, stateTransitionCount } from '../../lib/store/settlement-history.js';
import { getTrade, listOpenTrades, tradeItems } from '../../lib/store/trades.js';
import { acceptedTrade, type Trade } from '../../lib/domain/trade.js';
import { transactWrite } from '../../lib/store/table/transactions.js';
import { fund } from '../support/ledger.js';
import { newPlatform, type TestPlatform } from '../support/service.js';
import { newCustomer } from '../support/trade-parties.js';
import { isTerminated, localRunner, useTestWorkflows, tradeBody, waitForTrade } from '../support/trades.js';
import { ctx, testContext } from '../support/context.js';

useTestWorkflows({ sessionSeconds: 1 });

// The task functions' handlers, bound to this file's context as Lambda binds them to its own.
const activate = bindActivate(ctx);
const attempt = bindAttempt(ctx);
const defaultTask = bindDefault(ctx);

interface Market {
  platform: TestPlatform;
  buyer: string;
  seller: string;
}

async function market(): Promise<Market> {
  const platform = await newPlatform();
  const [buyer, seller] = await Promise.all([newCustomer(platform.platformCode), newCustomer(platform.platformCode)]);
  return { platform, buyer, seller };
}

/** Funds both sides of a 1 BTC at 1000 USD trade, with `extra` left over on each side. */
async function fundBoth({ buyer, seller }: Market, extra = '0'): Promise<void> {
  await fund(buyer, 'USD', new Money(1000).plus(extra).toFixed());
  await fund(seller, 'BTC', new Money(1).plus(extra).toFixed());
}

/**
 * A reported trade stored the way POST /trades stores it, but with no execution started: what a crash
 * between the write and StartExecution leaves behind, and a trade whose tasks a test drives by hand.
 */
async function storedTrade({ platform, buyer, seller }: Market, overrides?: Record<string, unknown>): Promise<Trade> {
  const nowMs = ctx.clock.nowMs();
  const body = tradeBody(platform, { buyer, seller, price: '1000', quantity: '1', overrides });
  const report = validateTradeReport(body, { platformCode: platform.platformCode, nowMs });
  if (!report.ok) throw new Error(report.errors.join('; '));
  const trade = acceptedTrade(report.value, {
    tradeId: newId(),
    nowMs,
    accountGroups: [platform.platformCode, platform.platformCode],
  });
  await transactWrite(ctx, tradeItems(ctx, trade));
  return trade;
}

async function balancesOf({ platform, buyer, seller }: Market) {
  const account = (participant_code: string, asset: string) => ({
    participant_code,
    account_group: platform.platformCode,
    account_label: 'general',
    asset,
  });
  const [buyerUsd, buyerBtc, sellerUsd, sellerBtc] = await Promise.all([
    balanceOf(ctx, account(buyer, 'USD')),
    balanceOf(ctx, account(buyer, 'BTC')),
    balanceOf(ctx, account(seller, 'USD')),
    balanceOf(ctx, account(seller, 'BTC')),
  ]);
  return {
    buyerUsd: buyerUsd.toFixed(),
    buyerBtc: buyerBtc.toFixed(),
    sellerUsd: sellerUsd.toFixed(),
    sellerBtc: sellerBtc.toFixed(),
  };
}

/**
 * Runs `task` with the buyer's dollars leaving (0.01 USD, a withdrawal say) just before the trade's settlement
 * transaction goes out: the race between a task's balance check and its write.
 */
async function withSpendBeforeSettlement<T>(
  parties: Market,
  trade: Trade,
  task: (spending: AppContext) => Promise<T>,
): Promise<T> {
  const real = ctx.db;
  let spent = false;
  const spending = testContext({
    db: {
      send: async (command: any) => {
        const isSettlement =
          command instanceof TransactWriteCommand &&
          JSON.stringify(command.input).includes(`settlement-${trade.trade_id}`);
        if (isSettlement && !spent) {
          spent = true;
          await bookMovement(ctx, {
            movement_id: newId(),
            type: 'withdrawal',
            reference: 'test',
            legs: moveLegs(
              {
                account: {
                  participant_code: parties.buyer,
                  account_group: parties.platform.platformCode,
                  account_label: 'general',
                  asset: 'USD',
                },
                platform_code: parties.platform.platformCode,
              },
              {
                account: systemAccount(SYSTEM_PARTICIPANTS.externalBoundary, 'withdrawals', 'USD'),
                platform_code: null,
              },
              new Money('0.01'),
            ),
          });
        }
        return real.send(command);
      },
    } as unknown as DynamoDBDocumentClient,
  });
  try {
    return await task(spending);
  } finally {
    expect(spent, 'the settlement transaction was attempted').toBe(true);
  }
}

const SETTLED_ONCE = { buyerUsd: '0', buyerBtc: '1', sellerUsd: '1000', sellerBtc: '0' };

describe('settlement tasks are idempotent', () => {
  it('running every task twice moves the trade once and the balances once', async () => {
    const parties = await market();
    await fundBoth(parties);
    const trade = await storedTrade(parties);
    const event = { trade_id: trade.trade_id };

    expect(await activate(event)).toMatchObject({ outcome: 'outstanding', trade_state: 'active' });
    expect(await activate(event)).toMatchObject({ outcome: 'outstanding', trade_state: 'active' });
    expect((await getTrade(ctx, trade.trade_id))?.trade_state).toBe('active');

    expect(await attempt(event)).toMatchObject({ outcome: 'settled' });
    expect(await attempt(event)).toMatchObject({ outcome: 'terminated', settlement_state: 'settled' });
    expect(await defaultTask(event)).toMatchObject({ outcome: 'terminated', settlement_state: 'settled' });
    expect(await activate(event)).toMatchObject({ outcome: 'terminated' });
    expect(await balancesOf(parties)).toEqual(SETTLED_ONCE);

    const movement = await ctx.db.send(
      new GetCommand({
        TableName: ctx.tables.main,
        Key: movementEntity.key({ movement_id: `settlement-${trade.trade_id}` }),
      }),
    );
    expect(movement.Item?.reference).toBe(trade.trade_id);
  });

  it('concurrent attempts of one funded trade settle it exactly once', async () => {
    const parties = await market();
    await fundBoth(parties, '5');
    const trade = await storedTrade(parties);
    const outcomes = await Promise.all(Array.from({ length: 6 }, () => attempt({ trade_id: trade.trade_id })));
    expect(outcomes.filter((o) => o.outcome === 'settled')).toHaveLength(1);
    expect(outcomes.filter((o) => o.outcome !== 'settled').every((o) => o.outcome === 'terminated')).toBe(true);
    expect(await balancesOf(parties)).toEqual({ buyerUsd: '5', buyerBtc: '1', sellerUsd: '1000', sellerBtc: '5' });
  });

  it('an attempt without the funds records who is short; default then defaults without touching balances', async () => {
    const parties = await market();
    await fund(parties.seller, 'BTC', '1');
    await fund(parties.buyer, 'USD', '999.99');
    const trade = await storedTrade(parties);
    const outcome = await attempt({ trade_id: trade.trade_id });
    expect(outcome).toMatchObject({
      outcome: 'outstanding',
      past_deadline: false,
      settlement_state: 'obligations_outstanding',
    });
    expect(outcome.parties).toEqual([
      { side: 'buy', settlement_state: 'obligations_outstanding', shortfall: '0.01' },
      { side: 'sell', settlement_state: 'current_obligations_met', shortfall: '0' },
    ]);
    const active = await getTrade(ctx, trade.trade_id);
    expect(active).toMatchObject({ trade_state: 'active', settlement_state: 'obligations_outstanding' });

    expect(await defaultTask({ trade_id: trade.trade_id })).toMatchObject({ outcome: 'defaulted' });
    expect(await defaultTask({ trade_id: trade.trade_id })).toMatchObject({
      outcome: 'terminated',
      settlement_state: 'defaulted',
    });
    const defaulted = await getTrade(ctx, trade.trade_id);
    expect(defaulted).toMatchObject({
      trade_state: 'terminated',
      settlement_state: 'defaulted',
      settled_timestamp: null,
    });
    expect(defaulted?.parties.map((p) => p.settlement_state)).toEqual(['defaulted', 'counterparty_defaulted']);
    expect(await balancesOf(parties)).toEqual({ buyerUsd: '999.99', buyerBtc: '0', sellerUsd: '0', sellerBtc: '1' });
    // A terminated trade leaves the index of open trades.
    expect((await listOpenTrades(ctx)).some((open) => open.trade_id === trade.trade_id)).toBe(false);
  });

  it('a spend between the balance check and the settlement write means "not met this session", nothing moves', async () => {
    const parties = await market();
    await fundBoth(parties);
    const trade = await storedTrade(parties);
    const outcome = await withSpendBeforeSettlement(parties, trade, (spending) =>
      bindAttempt(spending)({ trade_id: trade.trade_id }),
    );
    expect(outcome).toMatchObject({ outcome: 'outstanding', settlement_state: 'obligations_outstanding' });
    const after = await getTrade(ctx, trade.trade_id);
    expect(after).toMatchObject({
      trade_state: 'active',
      settlement_state: 'obligations_outstanding',
      settled_timestamp: null,
    });
    expect(after?.parties.map((p) => p.settlement_state)).toEqual([
      'obligations_outstanding',
      'current_obligations_met',
    ]);
    expect(await balancesOf(parties)).toEqual({ buyerUsd: '999.99', buyerBtc: '0', sellerUsd: '0', sellerBtc: '1' });
  });

  it('the same race in the default task fails it for a retry instead of ending the workflow with the trade open', async () => {
    const parties = await market();
    await fundBoth(parties);
    const trade = await storedTrade(parties);
    // Default is the workflow's last step: an "outstanding" answer here would end the execution and strand the trade.
    await expect(
      withSpendBeforeSettlement(parties, trade, (spending) => bindDefault(spending)({ trade_id: trade.trade_id })),
    ).rejects.toThrow(/retrying/);
    expect((await getTrade(ctx, trade.trade_id))?.trade_state).toBe('active');

    // The retry finds the buyer short and defaults; nothing moved.
    expect(await defaultTask({ trade_id: trade.trade_id })).toMatchObject({ outcome: 'defaulted' });
    const defaulted = await getTrade(ctx, trade.trade_id);
    expect(defaulted).toMatchObject({
      trade_state: 'terminated',
      settlement_state: 'defaulted',
      settled_timestamp: null,
    });
    expect(defaulted?.parties.map((p) => p.settlement_state)).toEqual(['defaulted', 'counterparty_defaulted']);
    expect(await balancesOf(parties)).toEqual({ buyerUsd: '999.99', buyerBtc: '0', sellerUsd: '0', sellerBtc: '1' });
  });

  it('a task for a trade that does not exist fails the task instead of inventing an outcome', async () => {
    await expect(attempt({ trade_id: newId() })).rejects.toThrow(/unknown trade/);
    await expect(attempt({})).rejects.toThrow(
      'settlement task attempt: expected { trade_id, leg_ends_at? }, got {} (trade_id: must be a non-empty string)',
    );
  });
});

describe('executions', () => {
  it('starting an execution twice runs it once', async () => {
    const parties = await market();
    await fundBoth(parties);
    const trade = await storedTrade(parties);
    const runner = localRunner()!;
    await Promise.all([runner.start(settlementInputFor(ctx, trade)), runner.start(settlementInputFor(ctx, trade))]);
    await runner.start(settlementInputFor(ctx, trade));
    expect(await runner.finished(trade.trade_id)).toBe('SUCCEEDED');
    const { executions } = await settlementHistory(ctx, trade.trade_id);
    expect(executions).toHaveLength(1);
    expect(await balancesOf(parties)).toEqual(SETTLED_ONCE);
  });

  it('a restarted execution (a second runner, as after a restart) never settles twice', async () => {
    const parties = await market();
    await fundBoth(parties);
    const trade = await storedTrade(parties);
    const first = new LocalSettlementRunner(ctx);
    const second = new LocalSettlementRunner(ctx);
    // Both run at once: one settles, the other finds the trade terminated and ends.
    await Promise.all([first.start(settlementInputFor(ctx, trade)), second.start(settlementInputFor(ctx, trade))]);
    expect(await first.finished(trade.trade_id)).toBe('SUCCEEDED');
    expect(await second.finished(trade.trade_id)).toBe('SUCCEEDED');
    expect(await balancesOf(parties)).toEqual(SETTLED_ONCE);

    // A third start after the trade settled is refused, like a second StartExecution of a name.
    const third = new LocalSettlementRunner(ctx);
    await third.start(settlementInputFor(ctx, trade));
    expect(await third.finished(trade.trade_id)).toBe('SKIPPED');
    expect(await balancesOf(parties)).toEqual(SETTLED_ONCE);
  });

  it('resumes a trade stored without an execution (the crash between write and start)', async () => {
    const parties = await market();
    await fundBoth(parties);
    const trade = await storedTrade(parties);
    expect((await listOpenTrades(ctx)).map((open) => open.trade_id)).toContain(trade.trade_id);
    const runner = new LocalSettlementRunner(ctx);
    // Only this test's trade: other test files share the table and run their own.
    expect(await resumeOpenTrades(ctx, runner, (open) => open.trade_id === trade.trade_id)).toEqual([trade.trade_id]);
    expect(await runner.finished(trade.trade_id)).toBe('SUCCEEDED');
    expect((await getTrade(ctx, trade.trade_id))?.settlement_state).toBe('settled');
    expect(await balancesOf(parties)).toEqual(SETTLED_ONCE);
  });

  it('stop aborts running executions and records them as aborted; resuming finishes the trade', async () => {
    const parties = await market();
    const trade = await storedTrade(parties);
    const runner = new LocalSettlementRunner(ctx);
    await runner.start(settlementInputFor(ctx, trade));
    await new Promise((resolve) => setTimeout(resolve, 300));
    await runner.stop();
    expect(await runner.finished(trade.trade_id)).toBe('ABORTED');
    await expect(runner.start(settlementInputFor(ctx, trade))).rejects.toThrow(/stopped/);

    await fundBoth(parties);
    const restarted = new LocalSettlementRunner(ctx);
    await resumeOpenTrades(ctx, restarted, (open) => open.trade_id === trade.trade_id);
    expect(await restarted.finished(trade.trade_id)).toBe('SUCCEEDED');
    expect(await balancesOf(parties)).toEqual(SETTLED_ONCE);
    const { executions } = await settlementHistory(ctx, trade.trade_id);
    expect(executions.map((e) => e.status)).toEqual(['ABORTED', 'SUCCEEDED']);
  });

  it('waits for a settlement time beyond the longest Node timer (~24.8 days) instead of attempting at once', async () => {
    const parties = await market();
    await fundBoth(parties);
    const trade = await storedTrade(parties, { settlement_timestamp: ctx.clock.nowMs() + 30 * 24 * 3_600_000 });
    let activated = false;
    const runner = new LocalSettlementRunner(ctx, {
      tasks: { activate: async (event) => ((activated = true), activate(event)) },
    });
    await runner.start(settlementInputFor(ctx, trade));
    await new Promise((resolve) => setTimeout(resolve, 500));
    await runner.stop();
    expect(activated).toBe(false);
    expect(await runner.finished(trade.trade_id)).toBe('ABORTED');
    expect((await settlementHistory(ctx, trade.trade_id)).executions.map((e) => e.status)).toEqual(['ABORTED']);
    expect((await getTrade(ctx, trade.trade_id))?.trade_state).toBe('accepted');
    expect(await balancesOf(parties)).toEqual({ buyerUsd: '1000', buyerBtc: '0', sellerUsd: '0', sellerBtc: '1' });
  });

  it('a task that throws is retried by the workflow, and the trade still settles once', async () => {
    const parties = await market();
    await fundBoth(parties);
    const trade = await storedTrade(parties);
    let failures = 0;
    const flaky = new LocalSettlementRunner(ctx, {
      tasks: {
        attempt: async (event) => {
          // Settle, then fail as if the Lambda timed out after committing: the retry must find it settled.
          const result = await attempt(event);
          if (failures++ === 0) throw new Error('lost the response');
          return result;
        },
      },
    });
    await flaky.start(settlementInputFor(ctx, trade));
    expect(await flaky.finished(trade.trade_id)).toBe('SUCCEEDED');
    expect(await balancesOf(parties)).toEqual(SETTLED_ONCE);
    const { executions } = await settlementHistory(ctx, trade.trade_id);
    const events = executions[0]!.events;
    expect(events.some((e) => e.type === 'StateRetried' && e.state === S.attemptSettlement)).toBe(true);
  });
});

describe('settlement history', () => {
  it('records the states a funded trade went through, and the ops CLI shows them with the live states', async () => {
    const parties = await market();
    await fundBoth(parties);
    const response = await parties.platform.post(
      '/trades',
      tradeBody(parties.platform, { buyer: parties.buyer, seller: parties.seller, price: '1000', quantity: '1' }),
    );
    const tradeId = response.body.message.trade_id;
    await waitForTrade(parties.platform, tradeId, isTerminated);
    expect(await localRunner()!.finished(tradeId)).toBe('SUCCEEDED');

    expect(await stateTransitionCount(ctx, tradeId)).toBe(6);
    const shown = (await runAdmin(['trade', 'history', '--trade-id', tradeId], { ctx })) as any;
    expect(shown.trade).toMatchObject({ trade_id: tradeId, trade_state: 'terminated', settlement_state: 'settled' });
    expect(shown.trade.parties[0]).toMatchObject({
      side: 'buy',
      delivers: '1000.00 USD',
      receives: '1.00000000 BTC',
      settlement_state: 'settled',
    });
    expect(shown.executions).toHaveLength(1);
    const execution = shown.executions[0];
    expect(execution).toMatchObject({
      execution_name: tradeId,
      status: 'SUCCEEDED',
      state_transitions: 6,
      error: null,
    });
    expect(execution.transitions.map((t: any) => [t.state, t.outcome])).toEqual([
      [S.settlesInThisExecution, null],
      [S.waitForSettlementTime, null],
      [S.activateTrade, 'outstanding'],
      [S.attemptSettlement, 'settled'],
      [S.settled, null],
      [S.done, null],
    ]);
    for (const transition of execution.transitions) {
      expect(Date.parse(transition.entered_at)).toBeLessThanOrEqual(Date.parse(transition.exited_at));
    }
  });

  it('shows each session of a trade that waited for funds', async () => {
    const parties = await market();
    const response = await parties.platform.post(
      '/trades',
      tradeBody(parties.platform, { buyer: parties.buyer, seller: parties.seller, price: '1000', quantity: '1' }),
    );
    const tradeId = response.body.message.trade_id;
    await waitForTrade(parties.platform, tradeId, (t) => t.settlement_state === 'obligations_outstanding');
    await fundBoth(parties);
    await waitForTrade(parties.platform, tradeId, isTerminated);
    await localRunner()!.finished(tradeId);
    const shown = (await runAdmin(['trade', 'history', '--trade-id', tradeId], { ctx })) as any;
    const attempts = shown.executions[0].transitions.filter((t: any) => t.state === S.attemptSettlement);
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    expect(attempts.at(-1)).toMatchObject({ outcome: 'settled' });
    expect(attempts[0]).toMatchObject({ outcome: 'outstanding', past_deadline: false });
    expect(shown.executions[0].transitions.some((t: any) => t.state === S.waitForNextSession)).toBe(true);
  });

  it('an unknown trade is a usage error', async () => {
    await expect(runAdmin(['trade', 'history', '--trade-id', 'nope'], { ctx })).rejects.toThrow('unknown trade nope');
    await expect(runAdmin(['trade', 'history'], { ctx })).rejects.toThrow('--trade-id is required');
  });
});
