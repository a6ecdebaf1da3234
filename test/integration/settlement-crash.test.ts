import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, describe, inject, it } from 'vitest';
import { validateTradeReport } from '../../lib/domain/trade-report.js';
import { LocalSettlementRunner, startLocalWorkflows } from '../../infra/local/workflow-runner.js';
import { settlementInputFor } from '../../lib/settlement/start-settlement.js';
import { newId } from '../../lib/store/codes.js';
import { balanceOf } from '../../lib/store/ledger.js';
import { runningExecutions, settlementHistory } from '../../lib/store/settlement-history.js';
import { getTrade, tradeItems } from '../../lib/store/trades.js';
import { acceptedTrade, type Trade } from '../../lib/domain/trade.js';
import { transactWrite } from '../../lib/store/table/transactions.js';
import { fund } from '../support/ledger.js';
import { newPlatform } from '../support/service.js';
import { ctx } from '../support/context.js';
import { TEST_SECRETS_KEY, TEST_TABLES } from '../support/tables.js';
import { newCustomer } from '../support/trade-parties.js';
import { tradeBody } from '../support/trades.js';

/**
 * A process running a settlement is killed (SIGKILL) between two steps. Its execution stays RUNNING in the
 * history until the resume on start or the sweep of another runner closes it (INTERRUPTED) and, if the
 * trade is still open, settles it with a new execution.
 */
const REPO = resolve(import.meta.dirname, '..', '..');
const children: ChildProcess[] = [];
const runners: LocalSettlementRunner[] = [];
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await Promise.all(runners.map((runner) => runner.stop()));
});

async function fundedTrade(): Promise<{ trade: Trade; buyer: string; seller: string }> {
  const platform = await newPlatform();
  const [buyer, seller] = await Promise.all([newCustomer(platform.platformCode), newCustomer(platform.platformCode)]);
  await Promise.all([fund(buyer, 'USD', '1000'), fund(seller, 'BTC', '1')]);
  const nowMs = ctx.clock.nowMs();
  const report = validateTradeReport(tradeBody(platform, { buyer, seller, price: '1000', quantity: '1' }), {
    platformCode: platform.platformCode,
    nowMs,
  });
  if (!report.ok) throw new Error(report.errors.join('; '));
  const trade = acceptedTrade(report.value, {
    tradeId: newId(),
    nowMs,
    accountGroups: [platform.platformCode, platform.platformCode],
  });
  await transactWrite(ctx, tradeItems(ctx, trade));
  return { trade, buyer, seller };
}

/** Runs the trade's settlement in another process until it hangs at `hang`, then kills it there. */
async function crashAt(tradeId: string, hang: 'before-attempt' | 'after-attempt'): Promise<void> {
  // Node itself with tsx's loader (not the tsx CLI, which would run it in a child the kill would miss).
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/settlement-crash-child.ts'], {
    cwd: REPO,
    env: {
      ...process.env,
      DYNAMODB_ENDPOINT: inject('dynamoEndpoint'),
      TABLE_NAME: TEST_TABLES.main,
      TTL_TABLE_NAME: TEST_TABLES.ttl,
      SECRETS_LOCAL_KEY: TEST_SECRETS_KEY,
      TRADE_ID: tradeId,
      HANG: hang,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const deadline = Date.now() + 60_000;
  while (!output.includes('HUNG')) {
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`the settlement process did not reach ${hang}: ${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
}

const statuses = async (tradeId: string) =>
  (await settlementHistory(ctx, tradeId)).executions.map((execution) => execution.status);
const runningOf = async (tradeId: string) =>
  (await runningExecutions(ctx)).filter((execution) => execution.trade_id === tradeId);

// Each test has a trade of its own and looks only at it (the sweeps and resumes are filtered to it): they run
// at once, each waiting on a process of its own (the context's expect, as concurrent tests need).
describe.concurrent('settlement history after a crash', () => {
  it('the sweep closes a run killed between activation and its attempt, and settles the trade with a new run', async ({
    expect,
  }) => {
    const { trade, buyer, seller } = await fundedTrade();
    await crashAt(trade.trade_id, 'before-attempt');
    expect(await statuses(trade.trade_id)).toEqual(['RUNNING']);
    expect((await getTrade(ctx, trade.trade_id, { consistent: true }))?.trade_state).toBe('active');
    expect(await runningOf(trade.trade_id)).toHaveLength(1);

    const runner = new LocalSettlementRunner(ctx);
    runners.push(runner);
    runner.startSweeping(200, (id) => id === trade.trade_id);
    const deadline = Date.now() + 30_000;
    while (!runner.finished(trade.trade_id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await runner.finished(trade.trade_id)).toBe('SUCCEEDED');
    expect(await statuses(trade.trade_id)).toEqual(['INTERRUPTED', 'SUCCEEDED']);
    expect(await runningOf(trade.trade_id)).toEqual([]);
    const settled = await getTrade(ctx, trade.trade_id, { consistent: true });
    expect(settled).toMatchObject({ trade_state: 'terminated', settlement_state: 'settled' });
    // Settled once: the buyer holds the bitcoin, the seller the dollars.
    expect(
      (
        await balanceOf(ctx, {
          participant_code: buyer,
          account_group: settled!.platform_code,
          account_label: 'general',
          asset: 'BTC',
        })
      ).toFixed(),
    ).toBe('1');
    expect(
      (
        await balanceOf(ctx, {
          participant_code: seller,
          account_group: settled!.platform_code,
          account_label: 'general',
          asset: 'USD',
        })
      ).toFixed(),
    ).toBe('1000');
  });

  it('the resume on start closes a run killed after it settled the trade, and does not run it again', async ({
    expect,
  }) => {
    const { trade } = await fundedTrade();
    await crashAt(trade.trade_id, 'after-attempt');
    expect(await statuses(trade.trade_id)).toEqual(['RUNNING']);
    expect((await getTrade(ctx, trade.trade_id, { consistent: true }))?.trade_state).toBe('terminated');

    const { stop } = await startLocalWorkflows(ctx, {
      resume: (open) => open.trade_id === trade.trade_id,
      sweepIntervalMs: 0,
    });
    await stop();
    expect(await statuses(trade.trade_id)).toEqual(['INTERRUPTED']);
    expect(await runningOf(trade.trade_id)).toEqual([]);
    const [execution] = (await settlementHistory(ctx, trade.trade_id)).executions;
    expect(execution?.error).toMatch(/ended before/);
  });

  it('leaves a live runner alone', async ({ expect }) => {
    const { trade } = await fundedTrade();
    const live = new LocalSettlementRunner(ctx, { tasks: { attempt: () => new Promise(() => undefined) } });
    runners.push(live);
    await live.start(settlementInputFor(ctx, trade));
    await new Promise((r) => setTimeout(r, 500));
    const sweeper = new LocalSettlementRunner(ctx);
    runners.push(sweeper);
    expect(await sweeper.sweepStranded((id) => id === trade.trade_id)).toEqual({ closed: [], resumed: [] });
    expect(await statuses(trade.trade_id)).toEqual(['RUNNING']);
    // Stopped, it records its own end (ABORTED); nothing is left for a sweep.
    await live.stop();
    expect(await statuses(trade.trade_id)).toEqual(['ABORTED']);
    expect(await runningOf(trade.trade_id)).toEqual([]);
  });
});
