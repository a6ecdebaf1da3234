import { ExecutionAlreadyExists, ExecutionDoesNotExist, type SFNClient } from '@aws-sdk/client-sfn';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { validateTradeReport } from '../../lib/domain/trade-report.js';
import type { AppContext } from '../../lib/context.js';
import { ensureSettlementRunning } from '../../lib/settlement/start-settlement.js';
import { sweepOpenTrades } from '../../lib/settlement/sweep-open-trades.js';
import { newId } from '../../lib/store/codes.js';
import { acceptedTrade, getTrade, tradeItems, updateTrade } from '../../lib/store/trades.js';
import { transactWrite } from '../../lib/store/transactions.js';
import { ctx, testContext } from '../support/context.js';

/**
 * The AWS sweep's decisions, against a stand-in for the Step Functions API (AWS's service, not ours; the
 * local runner covers the workflow itself). The stand-in answers StartExecution as AWS documents it: a repeat
 * with the same input while the execution is open succeeds, a name used by a closed execution is refused.
 */
const ARN = 'arn:aws:states:us-east-1:123456789012:stateMachine:Settlement';
const EXECUTION_ARN = 'arn:aws:states:us-east-1:123456789012:execution:Settlement:trade-1';
const trade = { trade_id: 'trade-1', accepted_timestamp: 1_790_000_000_000, settlement_timestamp: null };

function fakeStepFunctions(existing: { status: string } | null, options: { startedMeanwhile?: boolean } = {}) {
  const calls: string[] = [];
  const client = {
    send: async (command: { constructor: { name: string }; input: any }) => {
      const name = command.constructor.name;
      calls.push(`${name} ${command.input.executionArn ?? command.input.name}`);
      if (name === 'DescribeExecutionCommand') {
        if (!existing) throw new ExecutionDoesNotExist({ message: 'no such execution', $metadata: {} });
        return { status: existing.status };
      }
      if (name === 'StartExecutionCommand' && ((existing && existing.status !== 'RUNNING') || options.startedMeanwhile)) {
        throw new ExecutionAlreadyExists({ message: 'exists', $metadata: {} });
      }
      return {};
    },
  } as unknown as SFNClient;
  return { calls, ctx: withStepFunctions(client) };
}

/** A context whose settlement workflow is Step Functions reached through `client`. */
function withStepFunctions(client: SFNClient): AppContext {
  return testContext({ workflow: { kind: 'step-functions', client, stateMachineArn: ARN } });
}

describe('ensureSettlementRunning', () => {
  it('starts an execution named by the trade when there is none', async () => {
    const { calls, ctx } = fakeStepFunctions(null);
    expect(await ensureSettlementRunning(ctx, trade)).toBe('started');
    expect(calls).toEqual([`DescribeExecutionCommand ${EXECUTION_ARN}`, 'StartExecutionCommand trade-1']);
  });

  it('takes a start that lost the race to the request storing the trade as started', async () => {
    const { ctx } = fakeStepFunctions(null, { startedMeanwhile: true });
    expect(await ensureSettlementRunning(ctx, trade)).toBe('started');
  });

  it('leaves a running execution alone (not reported as started) and reports a succeeded one as finished', async () => {
    const running = fakeStepFunctions({ status: 'RUNNING' });
    expect(await ensureSettlementRunning(running.ctx, trade)).toBe('running');
    expect(running.calls).toEqual([`DescribeExecutionCommand ${EXECUTION_ARN}`]);
    const succeeded = fakeStepFunctions({ status: 'SUCCEEDED' });
    expect(await ensureSettlementRunning(succeeded.ctx, trade)).toBe('finished');
    expect(succeeded.calls).toEqual([`DescribeExecutionCommand ${EXECUTION_ARN}`]);
  });

  it.each(['FAILED', 'TIMED_OUT', 'ABORTED'])('redrives a %s execution by its execution ARN', async (status) => {
    const { calls, ctx } = fakeStepFunctions({ status });
    expect(await ensureSettlementRunning(ctx, trade)).toBe('redriven');
    expect(calls).toEqual([`DescribeExecutionCommand ${EXECUTION_ARN}`, `RedriveExecutionCommand ${EXECUTION_ARN}`]);
  });
});

/** An open trade accepted at `acceptedMs`, stored with no execution (the sweep only reads the open-trades index). */
async function storeOpenTrade(acceptedMs: number): Promise<string> {
  const report = validateTradeReport(
    {
      client_trade_id: `sweep-${newId()}`,
      session_id: '',
      trade_reporter: 'ops',
      platform_code: 'PLAT01',
      symbol: 'BTC/USD',
      product_type: 'spot',
      trade_type: 'regular',
      trade_price: '100',
      trade_quantity: '1',
      physical_delivery: true,
      transaction_timestamp: acceptedMs,
      parties_anonymous: false,
      parties: [
        { side: 'buy', participant_code: 'BUYER1', asset: 'BTC' },
        { side: 'sell', participant_code: 'SELLR1', asset: 'USD' },
      ],
    },
    { platformCode: 'PLAT01', nowMs: acceptedMs },
  );
  if (!report.ok) throw new Error(report.errors.join('; '));
  const trade = acceptedTrade(report.value, { tradeId: newId(), nowMs: acceptedMs, accountGroups: ['PLAT01', 'PLAT01'] });
  await transactWrite(ctx, tradeItems(ctx, trade));
  return trade.trade_id;
}

describe('sweepOpenTrades', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('goes on past a trade Step Functions refuses, so an older stuck trade strands no younger one', async () => {
    const acceptedMs = ctx.clock.nowMs() - 10 * 60_000;
    const stuck = await storeOpenTrade(acceptedMs);
    const stranded = await storeOpenTrade(acceptedMs + 1);
    const started: string[] = [];
    // Open trades of other test files share the table: to this stand-in their executions are all running.
    const sweepCtx = withStepFunctions({
      send: async (command: { constructor: { name: string }; input: any }) => {
        const name = command.constructor.name;
        const tradeId = command.input.name ?? String(command.input.executionArn).split(':').at(-1);
        if (name === 'StartExecutionCommand') return void started.push(tradeId);
        if (tradeId === stranded) throw new ExecutionDoesNotExist({ message: 'no such execution', $metadata: {} });
        if (tradeId !== stuck) return { status: 'RUNNING' };
        if (name === 'DescribeExecutionCommand') return { status: 'FAILED' };
        throw new Error('ExecutionNotRedrivable: the execution cannot be redriven');
      },
    } as unknown as SFNClient);
    const logged = vi.spyOn(sweepCtx.logger, 'error').mockImplementation(() => {});
    vi.spyOn(sweepCtx.logger, 'warn').mockImplementation(() => {});
    try {
      const counts = await sweepOpenTrades(sweepCtx);
      expect(started).toEqual([stranded]);
      expect(counts).toMatchObject({ started: 1, redriven: 0, failed: 1 });
      expect(logged).toHaveBeenCalledWith(expect.any(String), expect.objectContaining({ trade_id: stuck }));
    } finally {
      for (const tradeId of [stuck, stranded]) {
        const trade = (await getTrade(ctx, tradeId))!;
        await updateTrade(ctx, trade, ['accepted', 'active'], { trade_state: 'terminated' }, ctx.clock.nowMs());
      }
    }
  });
});
