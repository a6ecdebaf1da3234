// aws-local-stepfunctions needs Promise.withResolvers, which Node 20 lacks; the shim must load first.
import './promise-shim.js';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ExecutionTimeoutError, StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { clock } from '../../lib/clock.js';
import { settlementInputFor, useLocalSettlementStarter } from '../../lib/settlement/start-settlement.js';
import {
  interruptRunningExecutions,
  recordExecutionEnd,
  recordExecutionEvent,
  recordExecutionStart,
  settlementHistory,
  type ExecutionStatus,
  type SettlementEvent,
} from '../../lib/store/settlement-history.js';
import { listOpenTrades, type Trade } from '../../lib/store/trades.js';
import { handler as activateHandler } from '../../functions/settlement/activate-trade.js';
import { handler as attemptHandler } from '../../functions/settlement/attempt-settlement.js';
import { handler as defaultHandler } from '../../functions/settlement/default-trade.js';
import {
  SETTLEMENT_STATE_NAMES,
  settlementWorkflowDefinition,
  type SettlementExecutionInput,
  type SettlementWorkflowResources,
} from '../settlement-workflow.js';

/**
 * The local settlement runner: the same ASL definition Step Functions runs on AWS, executed in-process by
 * aws-local-stepfunctions, with each Task state calling the same Lambda handler module that AWS invokes.
 *
 * - One execution per trade_id per process; starting it again is a no-op, as is starting a trade whose
 *   settlement already succeeded (a run recorded SUCCEEDED in the table), like Step Functions refusing a
 *   second execution of a name.
 * - Wait states wait in real time. The first one ("Wait for settlement time") is measured on the service
 *   clock rather than the library's Date.now(), so tests that move the clock move settlement times too; the
 *   session wait is SETTLEMENT_SESSION_SECONDS (seconds under `npm start`).
 * - Every event (states entered and exited with task outcomes, failures, retries) is written to DynamoDB
 *   beside the trade, so the ops CLI in another process can show the history.
 * - On start it resumes every trade that is not terminated (design section 7): tasks are idempotent and all
 *   state is in DynamoDB, so a trade interrupted anywhere simply runs its workflow again from the top.
 */

type TaskHandler = (event: unknown) => Promise<unknown>;
type RunHandle = ReturnType<StateMachine['run']>;
type EngineEvent = RunHandle['eventLogs'] extends AsyncGenerator<infer E> ? E : never;

/** Placeholders that satisfy the definition's ARN checks; the Task overrides below replace the calls. */
const LOCAL_RESOURCES: SettlementWorkflowResources = {
  activate: 'arn:aws:lambda:us-east-1:000000000000:function:settlement-activate',
  attempt: 'arn:aws:lambda:us-east-1:000000000000:function:settlement-attempt',
  default: 'arn:aws:lambda:us-east-1:000000000000:function:settlement-default',
};

const DEFAULT_TASKS: Record<keyof SettlementWorkflowResources, TaskHandler> = {
  activate: activateHandler,
  attempt: attemptHandler,
  default: defaultHandler,
};

/** Where each task writes its result in the execution state (the definition's ResultPath), to read outcomes back. */
const TASK_RESULT_KEYS: Record<string, string> = {
  [SETTLEMENT_STATE_NAMES.activateTrade]: 'activation',
  [SETTLEMENT_STATE_NAMES.attemptSettlement]: 'attempt',
  [SETTLEMENT_STATE_NAMES.defaultTrade]: 'default',
};

export interface LocalRunnerOptions {
  /** Replace task handlers (tests wrap them to count calls or inject failures). */
  tasks?: Partial<Record<keyof SettlementWorkflowResources, TaskHandler>>;
}

/** The outcome of one start: how the execution ended, or `skipped` when the trade had already settled. */
export type LocalExecutionEnd = Exclude<ExecutionStatus, 'RUNNING' | 'INTERRUPTED'> | 'SKIPPED';

interface LocalExecution {
  abort?: () => void;
  finished: Promise<LocalExecutionEnd>;
}

export class LocalSettlementRunner {
  private readonly machine: StateMachine;
  private readonly tasks: Record<string, TaskHandler>;
  private readonly executions = new Map<string, LocalExecution>();
  private stopped = false;

  constructor(options: LocalRunnerOptions = {}) {
    // Cloned: the engine may annotate the definition it is given, and the shared one must stay pristine.
    const definition = structuredClone(settlementWorkflowDefinition(LOCAL_RESOURCES)) as unknown as StateMachineDefinition;
    this.machine = new StateMachine(definition, { validationOptions: { checkArn: true, checkPaths: true } });
    const tasks = { ...DEFAULT_TASKS, ...options.tasks };
    this.tasks = {
      [SETTLEMENT_STATE_NAMES.activateTrade]: tasks.activate,
      [SETTLEMENT_STATE_NAMES.attemptSettlement]: tasks.attempt,
      [SETTLEMENT_STATE_NAMES.defaultTrade]: tasks.default,
    };
  }

  /**
   * Starts the execution for `input.trade_id` unless this runner already has one. Resolves once the
   * execution is under way (its start recorded), not when it ends: `finished(tradeId)` waits for that.
   */
  async start(input: SettlementExecutionInput): Promise<void> {
    if (this.stopped) throw new Error('the local settlement runner is stopped');
    if (this.executions.has(input.trade_id)) return;
    let markStarted!: () => void;
    const started = new Promise<void>((resolve) => (markStarted = resolve));
    const execution: LocalExecution = { finished: Promise.resolve('SKIPPED') };
    // Registered before the first await, so two concurrent starts of one trade can't both run.
    this.executions.set(input.trade_id, execution);
    execution.finished = this.run(input, execution, markStarted);
    // A failure before the start was recorded surfaces to the caller; later ones end up in the history.
    await Promise.race([started, execution.finished]);
  }

  /** How the trade's execution in this runner ended (undefined if this runner never started one). */
  finished(tradeId: string): Promise<LocalExecutionEnd> | undefined {
    return this.executions.get(tradeId)?.finished;
  }

  /** Trade ids with an execution in this runner, running or ended. */
  tradeIds(): string[] {
    return [...this.executions.keys()];
  }

  /** Aborts every running execution and waits (briefly) for their histories to be written. */
  async stop(graceMs = 5_000): Promise<void> {
    this.stopped = true;
    for (const execution of this.executions.values()) execution.abort?.();
    const ends = Promise.allSettled([...this.executions.values()].map((execution) => execution.finished));
    await Promise.race([ends, new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
  }

  private async run(input: SettlementExecutionInput, execution: LocalExecution, markStarted: () => void): Promise<LocalExecutionEnd> {
    const tradeId = input.trade_id;
    const { executions } = await settlementHistory(tradeId);
    if (executions.some((previous) => previous.status === 'SUCCEEDED')) {
      markStarted();
      return 'SKIPPED';
    }

    const startedAt = Date.now();
    // Start time first, so execution ids sort in the order they ran.
    const executionId = `${String(startedAt).padStart(15, '0')}-${randomBytes(4).toString('hex')}`;
    await recordExecutionStart(tradeId, executionId, startedAt);

    let aborted = false;
    const early = new AbortController();
    execution.abort = () => {
      aborted = true;
      early.abort();
    };
    if (this.stopped) execution.abort();
    markStarted();
    // The engine's Wait state is one setTimeout, and Node runs a timer longer than about 24.8 days at once:
    // a trade due to settle further out would be attempted immediately. Sleep off all but the last stretch here.
    const settlementAtMs = Date.parse(input.settlement_at);
    await sleepUntil(settlementAtMs - MAX_TIMER_MS, early.signal);
    if (aborted) {
      await this.safely(() => recordExecutionEnd(tradeId, executionId, 'ABORTED', Date.now()));
      return 'ABORTED';
    }

    const run = this.machine.run(input as never, {
      noThrowOnAbort: true,
      overrides: {
        taskResourceLocalHandlers: this.tasks as never,
        waitTimeOverrides: {
          [SETTLEMENT_STATE_NAMES.waitForSettlementTime]: Math.max(0, settlementAtMs - clock.nowMs()),
        },
      },
    });
    execution.abort = () => {
      aborted = true;
      run.abort();
    };

    const recording = this.record(tradeId, executionId, run.eventLogs);
    let status: Exclude<ExecutionStatus, 'RUNNING'>;
    let error: string | undefined;
    try {
      await run.result;
      status = aborted ? 'ABORTED' : 'SUCCEEDED';
    } catch (failure) {
      status = failure instanceof ExecutionTimeoutError ? 'TIMED_OUT' : 'FAILED';
      error = failure instanceof Error ? `${failure.message}${failure.cause instanceof Error ? `: ${failure.cause.message}` : ''}` : String(failure);
    }
    await recording;
    await this.safely(() => recordExecutionEnd(tradeId, executionId, status, Date.now(), error));
    if (status === 'FAILED') console.error(JSON.stringify({ level: 'error', message: 'settlement execution failed', trade_id: tradeId, error }));
    return status;
  }

  /** Writes the engine's events in order. History is for people; a failed write is logged, never fatal. */
  private async record(tradeId: string, executionId: string, events: AsyncGenerator<EngineEvent>): Promise<void> {
    let sequence = 0;
    for await (const event of events) {
      const entry = historyEntry(event, ++sequence);
      if (entry) await this.safely(() => recordExecutionEvent(tradeId, executionId, entry));
    }
  }

  private async safely(write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (error) {
      if (!this.stopped) console.error(JSON.stringify({ level: 'warn', message: 'settlement history not written', error: (error as Error).message }));
    }
  }
}

/** The longest delay Node's timers honour; a longer one fires after 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Resolves once the service clock reaches `atMs` (at once if it has), or when `signal` aborts. */
async function sleepUntil(atMs: number, signal: AbortSignal): Promise<void> {
  while (!signal.aborted && clock.nowMs() < atMs) {
    try {
      await sleep(Math.min(atMs - clock.nowMs(), MAX_TIMER_MS), undefined, { signal });
    } catch {
      return; // aborted
    }
  }
}

function historyEntry(event: EngineEvent, sequence: number): SettlementEvent | undefined {
  const base = { sequence, type: event.type, at: event.timestamp, state: null, state_type: null, outcome: null, past_deadline: null, error: null };
  if (!('state' in event)) {
    return 'Error' in event ? { ...base, error: `${event.Error}: ${describeCause(event.Cause)}` } : base;
  }
  const entry: SettlementEvent = { ...base, state: event.state.name, state_type: event.state.type };
  if (event.type === 'StateExited') {
    const key = TASK_RESULT_KEYS[event.state.name];
    const result = key ? ((event.state.output as Record<string, unknown> | undefined)?.[key] as Record<string, unknown> | undefined) : undefined;
    if (result) {
      entry.outcome = typeof result.outcome === 'string' ? result.outcome : null;
      entry.past_deadline = typeof result.past_deadline === 'boolean' ? result.past_deadline : null;
    }
  }
  if ('Error' in event) entry.error = `${event.Error}: ${describeCause(event.Cause)}`;
  return entry;
}

function describeCause(cause: unknown): string {
  if (cause instanceof Error) return cause.message;
  return typeof cause === 'string' ? cause : JSON.stringify(cause);
}

export interface StartLocalWorkflowsOptions extends LocalRunnerOptions {
  /**
   * Resume open trades on start (default true, as `npm start` needs). A function limits which ones: tests
   * share one DynamoDB between files, and a file must not pick up another file's trades.
   */
  resume?: boolean | ((trade: Trade) => boolean);
}

/** Resumes every open trade (or those `filter` accepts) on `runner`. Returns the trade ids started. */
export async function resumeOpenTrades(runner: LocalSettlementRunner, filter: (trade: Trade) => boolean = () => true): Promise<string[]> {
  const trades = (await listOpenTrades()).filter(filter);
  await Promise.all(
    trades.map(async (trade) => {
      // Runs left RUNNING by a process that died are over; say so before this process runs its own.
      await interruptRunningExecutions(trade.trade_id, Date.now());
      await runner.start(settlementInputFor(trade));
    }),
  );
  return trades.map((trade) => trade.trade_id);
}

/**
 * Starts the local runner, makes `POST /trades` start executions on it, and resumes open trades. Returns
 * the stop function: it detaches the runner and aborts running executions.
 */
export async function startLocalWorkflows(options: StartLocalWorkflowsOptions = {}): Promise<() => Promise<void>> {
  const runner = new LocalSettlementRunner(options);
  useLocalSettlementStarter((input) => runner.start(input));
  const resume = options.resume ?? true;
  if (resume) {
    const resumed = await resumeOpenTrades(runner, typeof resume === 'function' ? resume : undefined);
    if (resumed.length > 0) console.log(`Resumed settlement of ${resumed.length} open trade(s)`);
  }
  activeRunner = runner;
  return async () => {
    useLocalSettlementStarter(undefined);
    if (activeRunner === runner) activeRunner = undefined;
    await runner.stop();
  };
}

let activeRunner: LocalSettlementRunner | undefined;

/** The runner `startLocalWorkflows` registered in this process (tests wait on its executions). */
export function localRunner(): LocalSettlementRunner | undefined {
  return activeRunner;
}
