import '../../infra/local/promise-shim.js';
import { createRequire } from 'node:module';
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { describe, expect, it } from 'vitest';
import {
  SETTLEMENT_STATE_NAMES as S,
  settlementExecutionInput,
  settlementWorkflowDefinition,
  type AslDefinition,
  type SettlementTaskResult,
} from '../../infra/settlement-workflow.js';
import { bind as bindActivate } from '../../functions/settlement/activate-trade.js';
import { bind as bindAttempt } from '../../functions/settlement/attempt-settlement.js';
import { bind as bindContinue } from '../../functions/settlement/continue-settlement.js';
import { bind as bindDefault } from '../../functions/settlement/default-trade.js';
import type { AppContext } from '../../lib/context.js';
import { settlementTaskInput } from '../../lib/settlement/task-input.js';

// asl-validator is CommonJS without type declarations; this is its documented call shape.
type AslValidator = (
  definition: unknown,
  options?: { checkPaths?: boolean; checkArn?: boolean },
) => { isValid: boolean; errors: unknown[]; errorsText: (separator?: string) => string };
const aslValidator = createRequire(import.meta.url)('asl-validator') as AslValidator;

const RESOURCES = {
  activate: 'arn:aws:lambda:eu-west-1:123456789012:function:settlement-activate',
  attempt: 'arn:aws:lambda:eu-west-1:123456789012:function:settlement-attempt',
  default: 'arn:aws:lambda:eu-west-1:123456789012:function:settlement-default',
  continue: 'arn:aws:lambda:eu-west-1:123456789012:function:settlement-continue',
};

const definition = settlementWorkflowDefinition(RESOURCES);
const TRADE_ID = '3f1c6c1e-6a55-4a55-9d35-2f1b7c3c9a10';
const input = settlementExecutionInput(TRADE_ID, Date.UTC(2030, 0, 1), 60, {
  number: 1,
  endsAtMs: Date.UTC(2030, 1, 1),
});
/** Leg 2 of a trade settling after it: the leg only waits for its end, then hands over. */
const waitingLeg = settlementExecutionInput(TRADE_ID, Date.UTC(2031, 0, 1), 60, {
  number: 2,
  endsAtMs: Date.UTC(2030, 6, 1),
});

type Handler = (input: unknown) => SettlementTaskResult | Promise<SettlementTaskResult>;

/** Runs the definition in-process with stub tasks and no real waiting; returns the output and every state entered. */
async function execute(
  handlers: { activate?: Handler; attempt: Handler; default?: Handler; continue?: Handler },
  start: unknown = input,
) {
  const machine = new StateMachine(structuredClone(definition) as unknown as StateMachineDefinition, {
    validationOptions: { checkArn: true, checkPaths: true },
  });
  const fallback: Handler = () => ({ outcome: 'outstanding' });
  const execution = machine.run(structuredClone(start) as never, {
    overrides: {
      taskResourceLocalHandlers: {
        [S.activateTrade]: (handlers.activate ?? fallback) as never,
        [S.attemptSettlement]: handlers.attempt as never,
        [S.defaultTrade]: (handlers.default ?? fallback) as never,
        [S.continueInNextExecution]: (handlers.continue ?? (() => ({ outcome: 'continued' }))) as never,
      },
      waitTimeOverrides: { [S.waitForSettlementTime]: 0, [S.waitForNextSession]: 0, [S.waitForEndOfExecution]: 0 },
      retryIntervalOverrides: {
        [S.activateTrade]: 0,
        [S.attemptSettlement]: 0,
        [S.defaultTrade]: 0,
        [S.continueInNextExecution]: 0,
      },
    },
  });
  const entered: string[] = [];
  for await (const event of execution.eventLogs) {
    if (event.type === 'StateEntered') entered.push(event.state.name);
  }
  const output = (await execution.result) as Record<string, unknown>;
  return { output, entered };
}

describe('settlement workflow definition', () => {
  it('is valid Amazon States Language, ARNs and paths included', () => {
    // The validator fills in defaults on the object it is given; keep the shared definition pristine.
    const result = aslValidator(structuredClone(definition), { checkArn: true, checkPaths: true });
    expect(result.errorsText()).toBe('');
    expect(result.isValid).toBe(true);
  });

  it('is plain JSON, so CDK can take it as a string', () => {
    expect(JSON.parse(JSON.stringify(definition))).toEqual(definition);
  });

  it('names every state for the console and wires tasks to the given resources', () => {
    const states = definition.States as Record<string, AslDefinition>;
    expect(Object.keys(states).sort()).toEqual(Object.values(S).sort());
    expect(definition.StartAt).toBe(S.settlesInThisExecution);
    expect(states[S.activateTrade]?.Resource).toBe(RESOURCES.activate);
    expect(states[S.attemptSettlement]?.Resource).toBe(RESOURCES.attempt);
    expect(states[S.defaultTrade]?.Resource).toBe(RESOURCES.default);
    expect(states[S.continueInNextExecution]?.Resource).toBe(RESOURCES.continue);
    expect(states[S.waitForSettlementTime]?.TimestampPath).toBe('$.settlement_at');
    expect(states[S.waitForEndOfExecution]?.TimestampPath).toBe('$.leg_ends_at');
    expect(states[S.waitForNextSession]?.SecondsPath).toBe('$.session_interval_seconds');
  });

  it('keeps the execution input on every task and retries task failures with backoff', () => {
    const states = definition.States as Record<string, AslDefinition>;
    for (const name of [S.activateTrade, S.attemptSettlement, S.defaultTrade, S.continueInNextExecution]) {
      const state = states[name] as AslDefinition;
      expect(state.ResultPath).toMatch(/^\$\.\w+$/);
      const retriers = state.Retry as AslDefinition[];
      expect(retriers.flatMap((r) => r.ErrorEquals as string[])).toEqual(
        expect.arrayContaining(['States.TaskFailed', 'Lambda.TooManyRequestsException', 'Lambda.ServiceException']),
      );
      for (const retrier of retriers) expect(retrier.BackoffRate).toBeGreaterThan(1);
    }
  });

  it('takes options for task timeouts and retries', () => {
    const custom = settlementWorkflowDefinition(RESOURCES, { taskTimeoutSeconds: 30, retry: { maxAttempts: 2 } });
    const attempt = (custom.States as Record<string, AslDefinition>)[S.attemptSettlement] as AslDefinition;
    expect(attempt.TimeoutSeconds).toBe(30);
    expect((attempt.Retry as AslDefinition[]).every((r) => r.MaxAttempts === 2)).toBe(true);
  });

  it('builds the execution input with ISO times, and says whether the settlement falls after the leg', () => {
    expect(input).toEqual({
      trade_id: TRADE_ID,
      settlement_at: '2030-01-01T00:00:00.000Z',
      session_interval_seconds: 60,
      leg: 1,
      leg_ends_at: '2030-02-01T00:00:00.000Z',
      continues: false,
    });
    expect(waitingLeg).toMatchObject({ leg: 2, leg_ends_at: '2030-07-01T00:00:00.000Z', continues: true });
  });
});

describe('settlement workflow, run locally', () => {
  it('settles a funded trade in six states and passes tasks the trade id (the attempt also the leg end)', async () => {
    const seen: unknown[] = [];
    const { output, entered } = await execute({
      activate: (i) => (seen.push(i), { outcome: 'outstanding' }),
      attempt: (i) => (seen.push(i), { outcome: 'settled' }),
    });
    expect(entered).toEqual([
      S.settlesInThisExecution,
      S.waitForSettlementTime,
      S.activateTrade,
      S.attemptSettlement,
      S.settled,
      S.done,
    ]);
    expect(seen).toEqual([{ trade_id: input.trade_id }, { trade_id: input.trade_id, leg_ends_at: input.leg_ends_at }]);
    expect(output).toMatchObject({ ...input, attempt: { outcome: 'settled' } });
  });

  it('rolls an outstanding trade to the next session until it settles', async () => {
    const outcomes: SettlementTaskResult[] = [
      { outcome: 'outstanding', past_deadline: false },
      { outcome: 'outstanding', past_deadline: false },
      { outcome: 'settled' },
    ];
    const { output, entered } = await execute({ attempt: () => outcomes.shift() as SettlementTaskResult });
    expect(entered.filter((s) => s === S.attemptSettlement)).toHaveLength(3);
    expect(entered.filter((s) => s === S.waitForNextSession)).toHaveLength(2);
    expect(entered.at(-1)).toBe(S.done);
    expect(entered).not.toContain(S.defaultTrade);
    expect(output).toMatchObject({ session_interval_seconds: 60, attempt: { outcome: 'settled' } });
  });

  it('treats an attempt without past_deadline as not yet past it', async () => {
    const outcomes: SettlementTaskResult[] = [{ outcome: 'outstanding' }, { outcome: 'settled' }];
    const { entered } = await execute({ attempt: () => outcomes.shift() as SettlementTaskResult });
    expect(entered).toContain(S.waitForNextSession);
    expect(entered.at(-1)).toBe(S.done);
  });

  it('defaults a trade still outstanding at its deadline', async () => {
    const outcomes: SettlementTaskResult[] = [
      { outcome: 'outstanding', past_deadline: false },
      { outcome: 'outstanding', past_deadline: true },
    ];
    let defaults = 0;
    const { output, entered } = await execute({
      attempt: () => outcomes.shift() as SettlementTaskResult,
      default: () => (defaults++, { outcome: 'defaulted' }),
    });
    expect(defaults).toBe(1);
    expect(entered.slice(-3)).toEqual([S.pastDeadline, S.defaultTrade, S.done]);
    expect(output).toMatchObject({ trade_id: input.trade_id, default: { outcome: 'defaulted' } });
  });

  it('stops at once when the trade was already closed by an earlier run', async () => {
    const { entered } = await execute({ attempt: () => ({ outcome: 'terminated' }) });
    expect(entered).toEqual([
      S.settlesInThisExecution,
      S.waitForSettlementTime,
      S.activateTrade,
      S.attemptSettlement,
      S.settled,
      S.done,
    ]);
  });

  it('a leg ending before the settlement time only waits for its end, then starts the next leg', async () => {
    const seen: unknown[] = [];
    const { output, entered } = await execute(
      {
        attempt: () => {
          throw new Error('no attempt in a waiting leg');
        },
        continue: (i) => (seen.push(i), { outcome: 'continued', next_execution: `${TRADE_ID}-3` }),
      },
      waitingLeg,
    );
    expect(entered).toEqual([S.settlesInThisExecution, S.waitForEndOfExecution, S.continueInNextExecution, S.done]);
    expect(seen).toEqual([{ trade_id: TRADE_ID, leg: 2 }]);
    expect(output).toMatchObject({ continuation: { outcome: 'continued', next_execution: `${TRADE_ID}-3` } });
  });

  it('an outstanding trade whose next session falls after the leg ends waits for the end and continues in the next leg', async () => {
    const outcomes: SettlementTaskResult[] = [
      { outcome: 'outstanding', past_deadline: false },
      { outcome: 'outstanding', past_deadline: false, leg_over: true },
    ];
    const { entered } = await execute({ attempt: () => outcomes.shift() as SettlementTaskResult });
    expect(entered.slice(-5)).toEqual([
      S.settled,
      S.pastDeadline,
      S.waitForEndOfExecution,
      S.continueInNextExecution,
      S.done,
    ]);
    expect(entered.filter((s) => s === S.waitForNextSession)).toHaveLength(1);
  });

  it('defaults rather than continues when the deadline and the leg end come together', async () => {
    const { entered } = await execute({
      attempt: () => ({ outcome: 'outstanding', past_deadline: true, leg_over: true }),
      default: () => ({ outcome: 'defaulted' }),
    });
    expect(entered.slice(-3)).toEqual([S.pastDeadline, S.defaultTrade, S.done]);
  });

  it('retries a failing task instead of losing the trade', async () => {
    let calls = 0;
    const { entered } = await execute({
      attempt: () => {
        calls++;
        if (calls === 1) throw new Error('DynamoDB throttled');
        return { outcome: 'settled' };
      },
    });
    expect(calls).toBe(2);
    expect(entered.at(-1)).toBe(S.done);
  });

  it('fails loudly on an outcome outside the task contract', async () => {
    await expect(execute({ attempt: () => ({ outcome: 'bogus' as never }) })).rejects.toThrow(/States.NoChoiceMatched/);
  });
});

describe('settlement task inputs', () => {
  it('are what the workflow passes each task', async () => {
    const parsed: unknown[] = [];
    await execute({
      activate: (i) => (parsed.push(settlementTaskInput('activate', i)), { outcome: 'outstanding' }),
      attempt: (i) => (parsed.push(settlementTaskInput('attempt', i)), { outcome: 'settled' }),
    });
    await execute(
      {
        attempt: () => ({ outcome: 'outstanding' }),
        continue: (i) => (parsed.push(settlementTaskInput('continue', i)), { outcome: 'continued' }),
      },
      waitingLeg,
    );
    expect(parsed).toEqual([
      { trade_id: TRADE_ID },
      { trade_id: TRADE_ID, leg_ends_at: input.leg_ends_at },
      { trade_id: TRADE_ID, leg: 2 },
    ]);
  });

  it('refuse a malformed input, naming the fields expected, what came and what is wrong', () => {
    expect(() => settlementTaskInput('activate', {})).toThrow(
      'settlement task activate: expected { trade_id }, got {} (trade_id: must be a non-empty string)',
    );
    expect(() => settlementTaskInput('default', null)).toThrow(
      'settlement task default: expected { trade_id }, got null (input: must be an object)',
    );
    expect(() => settlementTaskInput('attempt', { trade_id: 'x'.repeat(101) })).toThrow(
      /trade_id: at most 100 characters\)$/,
    );
    expect(() => settlementTaskInput('continue', { trade_id: TRADE_ID, leg: 0 })).toThrow(
      `settlement task continue: expected { trade_id, leg }, got {"trade_id":"${TRADE_ID}","leg":0} (leg: must be a positive integer)`,
    );
    expect(() => settlementTaskInput('continue', { trade_id: 7, leg: '2' })).toThrow(
      /\(trade_id: must be a non-empty string; leg: must be a positive integer\)$/,
    );
  });

  it('take an attempt without a usable leg end as one without a leg end', () => {
    expect(settlementTaskInput('attempt', { trade_id: TRADE_ID, leg_ends_at: 'soon' })).toEqual({ trade_id: TRADE_ID });
    expect(settlementTaskInput('attempt', { trade_id: TRADE_ID, leg_ends_at: 5 })).toEqual({ trade_id: TRADE_ID });
  });

  it('are parsed at the edge of each task function, before the trade is read', async () => {
    // No table: a malformed input must be refused before anything is read.
    const ctx = {} as AppContext;
    await expect(bindActivate(ctx)({ tradeId: TRADE_ID })).rejects.toThrow(/trade_id: must be a non-empty string/);
    await expect(bindAttempt(ctx)(TRADE_ID)).rejects.toThrow(/input: must be an object/);
    await expect(bindDefault(ctx)({ trade_id: '' })).rejects.toThrow(/trade_id: must be a non-empty string/);
    await expect(bindContinue(ctx)({ trade_id: TRADE_ID })).rejects.toThrow(/leg: must be a positive integer/);
  });
});
