import { ExecutionDoesNotExist, type SFNClient } from '@aws-sdk/client-sfn';
import { describe, expect, it } from 'vitest';
import { storeUnfundedTrade } from '../support/trades.js';
import { startLocalWorkflows } from '../../infra/local/workflow-runner.js';
import { runAdmin } from '../../infra/ops/cli.js';
import { SETTLEMENT_STATE_NAMES as S } from '../../infra/settlement-workflow.js';
import type { AppContext } from '../../lib/context.js';
import { startSettlement } from '../../lib/settlement/start-settlement.js';
import { settlementHistory } from '../../lib/store/settlement-history.js';
import { getTrade } from '../../lib/store/trades.js';
import { type Trade } from '../../lib/domain/trade.js';
import { testContext, type TestContext } from '../support/context.js';
import { StepFunctionsWorkflow } from '../../lib/runtime/step-functions-workflow.js';

/**
 * A settlement longer than one Step Functions execution runs in legs: the trade id's
 * execution, then `<trade_id>-2`, ... Legs here are seconds long (on AWS 30 days, under the one-year
 * limit), sessions 1 second and the spot deadline short, so several legs run in a few seconds on the local
 * runner with the real task handlers, the same definition as Step Functions.
 */
function legsContext(legSeconds: number, deadlineSeconds: number): TestContext {
  return testContext({
    env: {
      SETTLEMENT_LEG_SECONDS: String(legSeconds),
      SETTLEMENT_SESSION_SECONDS: '1',
      SPOT_SETTLEMENT_DEADLINE_SECONDS: String(deadlineSeconds),
    },
  });
}

/** An accepted spot trade whose parties hold nothing (so it defaults at its deadline), settling at `settlementAtMs`. */
function storeTrade(context: AppContext, settlementAtMs: number | null): Promise<Trade> {
  return storeUnfundedTrade(context, context.clock.nowMs(), settlementAtMs);
}

async function waitForTermination(context: AppContext, tradeId: string, timeoutMs = 20_000): Promise<Trade> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const trade = (await getTrade(context, tradeId, { consistent: true }))!;
    if (trade.trade_state === 'terminated') return trade;
    if (Date.now() > deadline) throw new Error(`trade ${tradeId} still ${trade.trade_state}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const statesOf = (execution: { transitions: { state: string }[] }) =>
  execution.transitions.map((transition) => transition.state);

describe('a settlement longer than one execution', () => {
  it('waits through legs named after the trade until its settlement time, and `trade history` lists every leg in order', async () => {
    const context = legsContext(3, 1);
    const { ctx, runner, stop } = await startLocalWorkflows(context, { resume: false, sweepIntervalMs: 0 });
    try {
      // Legs end 3 s and 6 s after acceptance; the settlement time falls in the third, whose two sessions
      // (6.5 s, then past the 1-second deadline at 7.5 s) end before it does.
      const trade = await storeTrade(context, context.clock.nowMs() + 6_500);
      await startSettlement(ctx, trade);
      const done = await waitForTermination(context, trade.trade_id);
      expect(await runner.finished(`${trade.trade_id}-3`)).toBe('SUCCEEDED');
      expect(done.settlement_state).toBe('defaulted');
      // Nothing was attempted before the settlement time.
      expect(done.obligations_outstanding_timestamp).toBeGreaterThanOrEqual(trade.settlement_timestamp!);

      const { executions } = await settlementHistory(context, trade.trade_id);
      expect(executions.map((execution) => [execution.execution_name, execution.status])).toEqual([
        [trade.trade_id, 'SUCCEEDED'],
        [`${trade.trade_id}-2`, 'SUCCEEDED'],
        [`${trade.trade_id}-3`, 'SUCCEEDED'],
      ]);
      // Each leg starts when the one before it ends.
      expect(executions[1]!.started_at).toBeGreaterThanOrEqual(trade.accepted_timestamp + 3_000);
      expect(executions[2]!.started_at).toBeGreaterThanOrEqual(trade.accepted_timestamp + 6_000);

      const shown = (await runAdmin(['trade', 'history', '--trade-id', trade.trade_id], { ctx })) as any;
      expect(shown.executions.map((execution: any) => execution.execution_name)).toEqual([
        trade.trade_id,
        `${trade.trade_id}-2`,
        `${trade.trade_id}-3`,
      ]);
      const waiting = [S.settlesInThisExecution, S.waitForEndOfExecution, S.continueInNextExecution, S.done];
      expect(statesOf(shown.executions[0])).toEqual(waiting);
      expect(statesOf(shown.executions[1])).toEqual(waiting);
      expect(shown.executions[0].transitions[2]).toMatchObject({
        state: S.continueInNextExecution,
        outcome: 'continued',
      });
      expect(statesOf(shown.executions[2])).toEqual([
        S.settlesInThisExecution,
        S.waitForSettlementTime,
        S.activateTrade,
        S.attemptSettlement,
        S.settled,
        S.pastDeadline,
        S.waitForNextSession,
        S.attemptSettlement,
        S.settled,
        S.pastDeadline,
        S.defaultTrade,
        S.done,
      ]);
    } finally {
      await stop();
    }
  });

  it('continues sessions that would outlive a leg in the next leg, and ends when the trade does', async () => {
    // Legs of 2 s, sessions of 1 s: each leg's second attempt finds its next session past the leg's end.
    const context = legsContext(2, 5);
    const { ctx, runner, stop } = await startLocalWorkflows(context, { resume: false, sweepIntervalMs: 0 });
    try {
      const trade = await storeTrade(context, null);
      await startSettlement(ctx, trade);
      const done = await waitForTermination(context, trade.trade_id);
      expect(await runner.finished(`${trade.trade_id}-3`)).toBe('SUCCEEDED');
      expect(done.settlement_state).toBe('defaulted');

      const { executions } = await settlementHistory(context, trade.trade_id);
      expect(executions.map((execution) => [execution.execution_name, execution.status])).toEqual([
        [trade.trade_id, 'SUCCEEDED'],
        [`${trade.trade_id}-2`, 'SUCCEEDED'],
        [`${trade.trade_id}-3`, 'SUCCEEDED'],
      ]);
      const shown = (await runAdmin(['trade', 'history', '--trade-id', trade.trade_id], { ctx })) as any;
      // The first leg attempts, then, its next session falling after its end, waits for the end and hands over.
      expect(statesOf(shown.executions[0]).slice(-4)).toEqual([
        S.pastDeadline,
        S.waitForEndOfExecution,
        S.continueInNextExecution,
        S.done,
      ]);
      expect(statesOf(shown.executions[1])).toContain(S.attemptSettlement);
      expect(statesOf(shown.executions[2]).slice(-2)).toEqual([S.defaultTrade, S.done]);
    } finally {
      await stop();
    }
  });

  it('`trade history` on AWS reads every leg from Step Functions in order, skipping a leg that never ran', async () => {
    const context = legsContext(2, 1);
    const trade = await storeTrade(context, null);
    // The trade is in its fifth leg (legs are 2 s); legs 1, 2 and 4 ran, 3 never did (the sweep started 4).
    context.clock.advance(9_000);
    const asked: string[] = [];
    const history = (name: string) => [
      { timestamp: new Date(1), type: 'ExecutionStarted' },
      {
        timestamp: new Date(2),
        type: 'ChoiceStateEntered',
        stateEnteredEventDetails: { name: S.settlesInThisExecution },
      },
      {
        timestamp: new Date(3),
        type: 'ChoiceStateExited',
        stateExitedEventDetails: { name: S.settlesInThisExecution, output: '{}' },
      },
      {
        timestamp: new Date(4),
        type: 'TaskStateEntered',
        stateEnteredEventDetails: { name: S.continueInNextExecution },
      },
      {
        timestamp: new Date(5),
        type: 'TaskStateExited',
        stateExitedEventDetails: {
          name: S.continueInNextExecution,
          output: JSON.stringify({
            attempt: { outcome: 'outstanding' },
            continuation: { outcome: 'continued', next_execution: name },
          }),
        },
      },
    ];
    const client = {
      send: async (command: { input: { executionArn: string } }) => {
        const name = command.input.executionArn.split(':').at(-1)!;
        asked.push(name);
        if (![trade.trade_id, `${trade.trade_id}-2`, `${trade.trade_id}-4`].includes(name))
          throw new ExecutionDoesNotExist({ message: 'no such execution', $metadata: {} });
        return { events: history(name) };
      },
    } as unknown as SFNClient;
    const aws = {
      ...context,
      workflow: new StepFunctionsWorkflow(client, 'arn:aws:states:us-east-1:123456789012:stateMachine:Settlement'),
    };
    const shown = (await runAdmin(['trade', 'history', '--trade-id', trade.trade_id], { ctx: aws })) as any;
    expect(shown.executions.map((execution: any) => execution.execution_name)).toEqual([
      trade.trade_id,
      `${trade.trade_id}-2`,
      `${trade.trade_id}-4`,
    ]);
    expect(shown.executions[0].execution_id).toBe(
      `arn:aws:states:us-east-1:123456789012:execution:Settlement:${trade.trade_id}`,
    );
    expect(shown.executions[0].transitions[1]).toMatchObject({
      state: S.continueInNextExecution,
      outcome: 'continued',
    });
    // Legs up to the one after the current (the clock is in leg 5): nothing further is asked.
    expect(asked).toEqual([1, 2, 3, 4, 5, 6].map((leg) => (leg === 1 ? trade.trade_id : `${trade.trade_id}-${leg}`)));
  });
});
