import { ExecutionAlreadyExists, ExecutionDoesNotExist, type SFNClient } from '@aws-sdk/client-sfn';
import { runsAs } from '../support/functions.js';
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { storeUnfundedTrade } from '../support/trades.js';
import { startLocalWorkflows, type LocalRunnerOptions } from '../../infra/local/workflow-runner.js';
import { bind as bindAttemptModule } from '../../functions/settlement/attempt-settlement.js';
const bindAttempt = runsAs('functions/settlement/attempt-settlement.ts', bindAttemptModule);
import { bind as bindSweepModule } from '../../functions/settlement/sweep-open-trades.js';
const bindSweep = runsAs('functions/settlement/sweep-open-trades.ts', bindSweepModule);
import type { AppContext } from '../../lib/context.js';
import { ensureSettlementRunning, settlementInputFor } from '../../lib/settlement/start-settlement.js';
import { STOP_BEFORE_TIMEOUT_MS } from '../../lib/settlement/sweep-open-trades.js';
import { settlementHistory } from '../../lib/store/settlement-history.js';
import { getTrade, listOpenTrades, updateTrade } from '../../lib/store/trades.js';
import { testContext, type TestContext } from '../support/context.js';
import { StepFunctionsWorkflow } from '../../lib/runtime/step-functions-workflow.js';

/**
 * The AWS sweep's decisions, against a stand-in for the Step Functions API (AWS's service, not ours; the
 * local runner covers the workflow itself). The stand-in answers StartExecution as AWS documents it: a repeat
 * with the same input while the execution is open succeeds, a name used by a closed execution is refused.
 */
const ARN = 'arn:aws:states:us-east-1:123456789012:stateMachine:Settlement';
const EXECUTION_ARN = 'arn:aws:states:us-east-1:123456789012:execution:Settlement:trade-1';
/** Accepted a minute ago: in its first leg, the execution named by the trade id. */
const trade = { trade_id: 'trade-1', accepted_timestamp: Date.now() - 60_000, settlement_timestamp: null };

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
      if (
        name === 'StartExecutionCommand' &&
        ((existing && existing.status !== 'RUNNING') || options.startedMeanwhile)
      ) {
        throw new ExecutionAlreadyExists({ message: 'exists', $metadata: {} });
      }
      return {};
    },
  } as unknown as SFNClient;
  return { calls, ctx: withStepFunctions(client) };
}

/** A context whose settlement workflow is Step Functions reached through `client`. */
function withStepFunctions(client: SFNClient, era?: string): TestContext {
  const context = testContext({ workflow: new StepFunctionsWorkflow(client, ARN) });
  if (era) context.clock.advance(Date.parse(era) - Date.now());
  return context;
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

  it('asks about the leg the clock is in: a trade accepted 65 days ago is in its third 30-day leg', async () => {
    const { calls, ctx } = fakeStepFunctions(null);
    const older = { ...trade, accepted_timestamp: Date.now() - 65 * 86_400_000 };
    expect(await ensureSettlementRunning(ctx, older)).toBe('started');
    expect(calls).toEqual([`DescribeExecutionCommand ${EXECUTION_ARN}-3`, 'StartExecutionCommand trade-1-3']);
  });

  it.each(['FAILED', 'TIMED_OUT', 'ABORTED'])('redrives a %s execution by its execution ARN', async (status) => {
    const { calls, ctx } = fakeStepFunctions({ status });
    expect(await ensureSettlementRunning(ctx, trade)).toBe('redriven');
    expect(calls).toEqual([`DescribeExecutionCommand ${EXECUTION_ARN}`, `RedriveExecutionCommand ${EXECUTION_ARN}`]);
  });
});

/**
 * The sweep reads every overdue open trade of the shared table, other files' included. Each test here runs in
 * an era of its own, its clock years back: only trades due before that are in the sweep's range, i.e. the
 * test's own (everything else is due in the present), and each later test's era is earlier than the one
 * before, so no test sees another's leftovers.
 */
function eraContext(era: string, env: Record<string, string> = {}): TestContext {
  const context = testContext({ env: { SETTLEMENT_SESSION_SECONDS: '1', ...env } });
  context.clock.advance(Date.parse(era) - Date.now());
  return context;
}

const DAY_MS = 86_400_000;

/** An unfunded open trade accepted at `acceptedMs`, stored with no execution; its id. */
async function storeOpenTrade(
  context: AppContext,
  acceptedMs: number,
  settlementAtMs: number | null = null,
): Promise<string> {
  return (await storeUnfundedTrade(context, acceptedMs, settlementAtMs)).trade_id;
}

/** Closes the trades a test leaves open, so nothing else ever finds them. */
async function closeTrades(context: AppContext, tradeIds: readonly string[]): Promise<void> {
  for (const tradeId of tradeIds) {
    const trade = (await getTrade(context, tradeId, { consistent: true }))!;
    if (trade.trade_state !== 'terminated')
      await updateTrade(context, trade, ['accepted', 'active'], { trade_state: 'terminated' }, context.clock.nowMs());
  }
}

/** The local runner on `context` (no resume, no timer: the test calls the sweep handler itself). */
async function localWorkflows(context: TestContext, options: LocalRunnerOptions = {}) {
  const workflows = await startLocalWorkflows(context, { resume: false, sweepIntervalMs: 0, ...options });
  return { ...workflows, sweep: bindSweep(workflows.ctx) };
}

describe('the settlement sweep, through its handler, on the local runner', () => {
  it('finds a trade past its due time through the open-trades index and starts its execution, which runs to the end', async () => {
    const era = eraContext('2015-06-01T00:00:00Z');
    const tradeId = await storeOpenTrade(era, era.clock.nowMs() - 3 * DAY_MS);
    const { sweep, runner, stop } = await localWorkflows(era);
    try {
      const report = await sweep();
      expect(report).toMatchObject({ visited: 1, started: 1, redriven: 0, failed: 0, more: false });
      expect(runner.tradeIds()).toEqual([tradeId]);
      expect(await runner.finished(tradeId)).toBe('SUCCEEDED');
      expect(await getTrade(era, tradeId, { consistent: true })).toMatchObject({
        trade_state: 'terminated',
        settlement_state: 'defaulted',
      });
      // Terminated: out of the index, so the next run has nothing to do.
      expect(await sweep()).toMatchObject({ visited: 0, more: false });
    } finally {
      await stop();
      await closeTrades(era, [tradeId]);
    }
  });

  it('leaves a trade alone until it is due, then redrives its failed execution', async () => {
    const era = eraContext('2014-06-01T00:00:00Z');
    const tradeId = await storeOpenTrade(era, era.clock.nowMs() - 3 * DAY_MS);
    const attempt = bindAttempt(era);
    let calls = 0;
    const { sweep, runner, stop } = await localWorkflows(era, {
      // No task retries: the first attempt's failure fails the execution.
      definition: { retry: { maxAttempts: 0 } },
      tasks: {
        attempt: async (event) => {
          if (calls++ === 0) throw new Error('attempt task crashed');
          return attempt(event);
        },
      },
    });
    try {
      await runner.start(settlementInputFor(era, (await getTrade(era, tradeId))!));
      expect(await runner.finished(tradeId)).toBe('FAILED');
      // The activation moved the trade's due time a session (plus the margin) ahead: not the sweep's yet.
      expect((await getTrade(era, tradeId, { consistent: true }))?.trade_state).toBe('active');
      expect(await sweep()).toMatchObject({ visited: 0 });

      era.clock.advance(10 * 60_000);
      expect(await sweep()).toMatchObject({ visited: 1, redriven: 1, started: 0 });
      expect(await runner.finished(tradeId)).toBe('SUCCEEDED');
      expect(await getTrade(era, tradeId, { consistent: true })).toMatchObject({
        trade_state: 'terminated',
        settlement_state: 'defaulted',
      });
      const { executions } = await settlementHistory(era, tradeId);
      expect(executions.map((execution) => execution.status)).toEqual(['FAILED', 'SUCCEEDED']);
    } finally {
      await stop();
      await closeTrades(era, [tradeId]);
    }
  });

  it('revives at most SETTLEMENT_SWEEP_MAX_TRADES per invocation, most overdue first; the next invocations take the rest, each trade once', async () => {
    const era = eraContext('2013-06-01T00:00:00Z', { SETTLEMENT_SWEEP_MAX_TRADES: '4' });
    const base = era.clock.nowMs() - 3 * DAY_MS;
    // Accepted a minute apart: trade i is the i-th most overdue.
    const tradeIds = await Promise.all(Array.from({ length: 10 }, (_, i) => storeOpenTrade(era, base + i * 60_000)));
    const { sweep, runner, stop } = await localWorkflows(era);
    try {
      const visits: string[][] = [];
      const reports = [];
      for (let run = 0; run < 4; run++) {
        const before = runner.tradeIds().length;
        reports.push(await sweep());
        visits.push(runner.tradeIds().slice(before));
      }
      expect(reports.map((report) => [report.visited, report.started, report.more])).toEqual([
        [4, 4, true],
        [4, 4, true],
        [2, 2, false],
        [0, 0, false],
      ]);
      expect(visits).toEqual([tradeIds.slice(0, 4), tradeIds.slice(4, 8), tradeIds.slice(8), []]);
      for (const tradeId of tradeIds) expect(await runner.finished(tradeId)).toBe('SUCCEEDED');
    } finally {
      await stop();
      await closeTrades(era, tradeIds);
    }
  });

  it('takes no trade once the invocation is about to time out, and leaves the rest for the next', async () => {
    const era = eraContext('2012-06-01T00:00:00Z');
    const tradeIds = await Promise.all(
      Array.from({ length: 3 }, () => storeOpenTrade(era, era.clock.nowMs() - 3 * DAY_MS)),
    );
    const { sweep, runner, stop } = await localWorkflows(era);
    try {
      expect(await sweep(undefined, { getRemainingTimeInMillis: () => STOP_BEFORE_TIMEOUT_MS - 1 })).toMatchObject({
        visited: 0,
        more: true,
      });
      expect(runner.tradeIds()).toEqual([]);
      expect(await sweep(undefined, { getRemainingTimeInMillis: () => 5 * 60_000 })).toMatchObject({
        visited: 3,
        started: 3,
        more: false,
      });
    } finally {
      await stop();
      await closeTrades(era, tradeIds);
    }
  });
});

describe('the settlement sweep against Step Functions', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('goes on past a trade Step Functions refuses, so an older stuck trade strands no younger one', async () => {
    const era = '2011-06-01T00:00:00Z';
    const acceptedMs = Date.parse(era) - 10 * 60_000;
    const started: string[] = [];
    let stuck = '';
    let stranded = '';
    const sweepCtx = withStepFunctions(
      {
        send: async (command: { constructor: { name: string }; input: any }) => {
          const name = command.constructor.name;
          const tradeId = command.input.name ?? String(command.input.executionArn).split(':').at(-1);
          if (name === 'StartExecutionCommand') return void started.push(tradeId);
          if (tradeId === stranded) throw new ExecutionDoesNotExist({ message: 'no such execution', $metadata: {} });
          if (tradeId !== stuck) throw new Error(`unexpected trade ${tradeId}`);
          if (name === 'DescribeExecutionCommand') return { status: 'FAILED' };
          throw new Error('ExecutionNotRedrivable: the execution cannot be redriven');
        },
      } as unknown as SFNClient,
      era,
    );
    stuck = await storeOpenTrade(sweepCtx, acceptedMs - 1);
    stranded = await storeOpenTrade(sweepCtx, acceptedMs);
    const logged = vi.spyOn(sweepCtx.logger, 'error').mockImplementation(() => {});
    vi.spyOn(sweepCtx.logger, 'warn').mockImplementation(() => {});
    try {
      sweepCtx.clock.advance(10 * 60_000);
      const counts = await bindSweep(sweepCtx)();
      expect(started).toEqual([stranded]);
      expect(counts).toMatchObject({ started: 1, redriven: 0, failed: 1, visited: 2, past_deadline: 0 });
      expect(logged).toHaveBeenCalledWith(expect.any(String), expect.objectContaining({ trade_id: stuck }));
      // Both were postponed: the next run (a minute later) doesn't ask Step Functions about them again.
      sweepCtx.clock.advance(60_000);
      expect(await bindSweep(sweepCtx)()).toMatchObject({ visited: 0 });
      expect((await listOpenTrades(sweepCtx)).map((trade) => trade.trade_id)).toEqual(
        expect.arrayContaining([stuck, stranded]),
      );
    } finally {
      await closeTrades(sweepCtx, [stuck, stranded]);
    }
  });

  it('counts the trades it finds open past their deadline in every run while they stay open', async () => {
    const sweepCtx = withStepFunctions(
      { send: async () => ({ status: 'FAILED' }) } as unknown as SFNClient,
      '2010-06-01T00:00:00Z',
    );
    vi.spyOn(sweepCtx.logger, 'warn').mockImplementation(() => {});
    const logged = vi.spyOn(sweepCtx.logger, 'error').mockImplementation(() => {});
    // Spot: the deadline is 2 days after acceptance; one accepted 3 days ago should have defaulted.
    const late = await storeOpenTrade(sweepCtx, sweepCtx.clock.nowMs() - 3 * DAY_MS);
    const young = await storeOpenTrade(sweepCtx, sweepCtx.clock.nowMs() - DAY_MS);
    try {
      expect(await bindSweep(sweepCtx)()).toMatchObject({ visited: 2, redriven: 2, past_deadline: 1 });
      expect(logged).toHaveBeenCalledWith(
        'trades past their deadline',
        expect.objectContaining({ count: 1, trade_ids: [late] }),
      );
      // The next scheduled run (5 minutes on) finds it again; the other one waits for its recheck.
      sweepCtx.clock.advance(5 * 60_000);
      expect(await bindSweep(sweepCtx)()).toMatchObject({ visited: 1, past_deadline: 1 });
    } finally {
      await closeTrades(sweepCtx, [late, young]);
    }
  });

  it('reads only the overdue trades: open trades whose settlement is not due cost it nothing', async () => {
    const sweepCtx = withStepFunctions(
      { send: async () => ({ status: 'RUNNING' }) } as unknown as SFNClient,
      '2010-01-15T00:00:00Z',
    );
    vi.spyOn(sweepCtx.logger, 'warn').mockImplementation(() => {});
    const nowMs = sweepCtx.clock.nowMs();
    // 60 healthy open trades (settling in 30 days, so not due: several in each of the 8 shards) and one overdue.
    const healthy: string[] = [];
    for (let batch = 0; batch < 3; batch++) {
      healthy.push(
        ...(await Promise.all(
          Array.from({ length: 20 }, () => storeOpenTrade(sweepCtx, nowMs - DAY_MS, nowMs + 30 * DAY_MS)),
        )),
      );
    }
    const overdue = await storeOpenTrade(sweepCtx, nowMs - 3 * DAY_MS);
    // Counts what the sweep's index queries evaluate.
    const scanned: number[] = [];
    const db = sweepCtx.db;
    const counting = Object.create(db) as DynamoDBDocumentClient;
    counting.send = (async (command: unknown) => {
      const out = await db.send(command as never);
      if (command instanceof QueryCommand) scanned.push((out as { ScannedCount?: number }).ScannedCount ?? 0);
      return out;
    }) as never;
    try {
      expect(await bindSweep({ ...sweepCtx, db: counting })()).toMatchObject({ visited: 1, running: 1, more: false });
      // One query per open-trades shard, and nothing evaluated but the overdue trade.
      expect(scanned).toHaveLength(8);
      expect(scanned.reduce((sum, n) => sum + n, 0)).toBe(1);
    } finally {
      await closeTrades(sweepCtx, [...healthy, overdue]);
    }
  });
});
