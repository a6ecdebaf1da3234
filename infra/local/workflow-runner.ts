// aws-local-stepfunctions needs Promise.withResolvers, which Node 20 lacks; the shim must load first.
import './promise-shim.js';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { ExecutionTimeoutError, StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import * as z from 'zod/mini';
import type { AppContext } from '../../lib/context.js';
import { executionNameOfInput } from '../../lib/domain/workflow-io.js';
import { settlementInputFor } from '../../lib/settlement/start-settlement.js';
import {
  closeRunningExecution,
  interruptRunningExecutions,
  recordExecutionEnd,
  recordExecutionEvent,
  recordExecutionStart,
  runningExecutions,
  settlementHistory,
  type ExecutionStatus,
  type SettlementEvent,
} from '../../lib/store/settlement-history.js';
import { getTrade, listOpenTrades } from '../../lib/store/trades.js';
import { type Trade } from '../../lib/domain/trade.js';
import { bind as bindActivate } from '../../functions/settlement/activate-trade.js';
import { bind as bindAttempt } from '../../functions/settlement/attempt-settlement.js';
import { bind as bindContinue } from '../../functions/settlement/continue-settlement.js';
import { bind as bindDefault } from '../../functions/settlement/default-trade.js';
import { bind as bindSweep } from '../../functions/settlement/sweep-open-trades.js';
import type { EnsureOutcome } from '../../lib/domain/workflow-io.js';
import { asFunction, asService, authorizeLocal } from './iam/enforcement.js';
import {
  SETTLEMENT_STATE_NAMES,
  settlementWorkflowDefinition,
  type SettlementExecutionInput,
  type SettlementWorkflowOptions,
  type SettlementWorkflowResources,
} from '../settlement-workflow.js';

/**
 * The local settlement runner: the same ASL definition Step Functions runs on AWS, executed in-process by
 * aws-local-stepfunctions, with each Task state calling the same Lambda handler module that AWS invokes.
 *
 * - One execution per name (the trade id, `<trade_id>-<n>` for a later leg) per process; starting it again
 *   is a no-op, as is starting a leg that already succeeded (a run recorded SUCCEEDED in the table), like
 *   Step Functions refusing a second execution of a name.
 * - Wait states wait in real time. The first one ("Wait for settlement time") is measured on the service
 *   clock rather than the library's Date.now(), so tests that move the clock move settlement times too; the
 *   session wait is SETTLEMENT_SESSION_SECONDS (seconds under `npm start`).
 * - Every event (states entered and exited with task outcomes, failures, retries) is written to DynamoDB
 *   beside the trade, so the ops CLI in another process can show the history.
 * - On start it resumes every trade that is not terminated: tasks are idempotent and all
 *   state is in DynamoDB, so a trade interrupted anywhere simply runs its workflow again from the top.
 * - No history stays RUNNING after a crash: each execution records its owner (host, pid, runner), and the
 *   resume on start and a periodic sweep close every RUNNING execution whose owner is gone (INTERRUPTED),
 *   resuming its trade if it is still open.
 * - The same periodic sweep runs the settlement sweep's handler (the scheduled Lambda on AWS): overdue open
 *   trades get an execution again here (`ensure`), so a failed execution is redriven locally too.
 */

type TaskHandler = (event: unknown) => Promise<unknown>;
type RunHandle = ReturnType<StateMachine['run']>;
type EngineEvent = RunHandle['eventLogs'] extends AsyncGenerator<infer E> ? E : never;

/** Placeholders that satisfy the definition's ARN checks; the Task overrides below replace the calls. */
const LOCAL_RESOURCES: SettlementWorkflowResources = {
  activate: 'arn:aws:lambda:us-east-1:000000000000:function:settlement-activate',
  attempt: 'arn:aws:lambda:us-east-1:000000000000:function:settlement-attempt',
  default: 'arn:aws:lambda:us-east-1:000000000000:function:settlement-default',
  continue: 'arn:aws:lambda:us-east-1:000000000000:function:settlement-continue',
};

/**
 * The handler module of each task function and of the settlement sweep (infra/settlement.ts names the same:
 * a task runs under that function's deployed role; test/infra/local-iam.test.ts holds the two together).
 */
export const LOCAL_TASK_HANDLERS: Record<keyof SettlementWorkflowResources, string> = {
  activate: 'functions/settlement/activate-trade.ts',
  attempt: 'functions/settlement/attempt-settlement.ts',
  default: 'functions/settlement/default-trade.ts',
  continue: 'functions/settlement/continue-settlement.ts',
};
export const LOCAL_SWEEP_HANDLER = 'functions/settlement/sweep-open-trades.ts';

/** The task functions' handlers, bound to the runner's context as Lambda binds them to its own. */
const defaultTasks = (ctx: AppContext): Record<keyof SettlementWorkflowResources, TaskHandler> => ({
  activate: bindActivate(ctx),
  attempt: bindAttempt(ctx),
  default: bindDefault(ctx),
  continue: bindContinue(ctx),
});

/** Where each task writes its result in the execution state (the definition's ResultPath), to read outcomes back. */
const TASK_RESULT_KEYS: Record<string, string> = {
  [SETTLEMENT_STATE_NAMES.activateTrade]: 'activation',
  [SETTLEMENT_STATE_NAMES.attemptSettlement]: 'attempt',
  [SETTLEMENT_STATE_NAMES.defaultTrade]: 'default',
  [SETTLEMENT_STATE_NAMES.continueInNextExecution]: 'continuation',
};

export interface LocalRunnerOptions {
  /** Replace task handlers (tests wrap them to count calls or inject failures). */
  tasks?: Partial<Record<keyof SettlementWorkflowResources, TaskHandler>>;
  /** The definition's options (tests shorten task retries to see an execution fail). */
  definition?: SettlementWorkflowOptions;
}

/** Runners alive in this process, by owner id. */
const liveOwners = new Set<string>();

/**
 * Whether the runner that recorded an execution may still be running it: a runner of this process that
 * hasn't stopped, or a live process on this host. Another host's runner can't be checked and is presumed
 * alive (locally there is only this host).
 */
function ownerAlive(owner: string | null): boolean {
  if (!owner) return false;
  const [host, pidText] = owner.split(':');
  const pid = Number(pidText);
  if (host !== hostname()) return true;
  if (pid === process.pid) return liveOwners.has(owner);
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Which trades a sweep may touch. */
export type TradeIdFilter = (tradeId: string) => boolean | Promise<boolean>;

/** What a sweep did: executions it closed, and trades it resumed. */
export interface SweepResult {
  closed: { trade_id: string; execution_id: string; status: ExecutionStatus }[];
  resumed: string[];
}

/** The outcome of one start: how the execution ended, or `skipped` when the trade had already settled. */
export type LocalExecutionEnd = Exclude<ExecutionStatus, 'RUNNING' | 'INTERRUPTED'> | 'SKIPPED';

interface LocalExecution {
  abort?: () => void;
  finished: Promise<LocalExecutionEnd>;
  /** Set once it ended. */
  end?: LocalExecutionEnd;
}

export class LocalSettlementRunner {
  private readonly machine: StateMachine;
  private readonly tasks: Record<string, TaskHandler>;
  private readonly executions = new Map<string, LocalExecution>();
  /** Ends this runner could not write (DynamoDB refused): the sweep writes them later. */
  private readonly unrecordedEnds = new Map<
    string,
    { tradeId: string; status: Exclude<ExecutionStatus, 'RUNNING'>; atMs: number; error?: string }
  >();
  private sweepTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;

  constructor(
    private readonly ctx: AppContext,
    options: LocalRunnerOptions = {},
  ) {
    // Cloned: the engine may annotate the definition it is given, and the shared one must stay pristine.
    const definition = structuredClone(
      settlementWorkflowDefinition(LOCAL_RESOURCES, options.definition),
    ) as unknown as StateMachineDefinition;
    this.machine = new StateMachine(definition, { validationOptions: { checkArn: true, checkPaths: true } });
    const tasks = { ...defaultTasks(ctx), ...options.tasks };
    // Each task as its function, under its deployed role, as Step Functions invokes the task's Lambda.
    const task = (name: keyof SettlementWorkflowResources) => asFunction(LOCAL_TASK_HANDLERS[name], tasks[name]);
    this.tasks = {
      [SETTLEMENT_STATE_NAMES.activateTrade]: task('activate'),
      [SETTLEMENT_STATE_NAMES.attemptSettlement]: task('attempt'),
      [SETTLEMENT_STATE_NAMES.defaultTrade]: task('default'),
      [SETTLEMENT_STATE_NAMES.continueInNextExecution]: task('continue'),
    };
    liveOwners.add(this.owner);
  }

  /**
   * Closes every execution recorded RUNNING that no live runner is running: one whose process died
   * (INTERRUPTED), or one of this runner whose end could not be written (its real end). A trade still open
   * gets a new execution here. `filter` limits the sweep to some trades (tests share one database).
   */
  async sweepStranded(filter: TradeIdFilter = () => true): Promise<SweepResult> {
    const result: SweepResult = { closed: [], resumed: [] };
    for (const running of await runningExecutions(this.ctx)) {
      if (!(await filter(running.trade_id))) continue;
      const mine = running.owner === this.owner;
      const pending = this.unrecordedEnds.get(running.execution_id);
      if (mine ? !pending : ownerAlive(running.owner)) continue;
      const status = pending?.status ?? 'INTERRUPTED';
      const closed = await closeRunningExecution(
        this.ctx,
        running.trade_id,
        running.execution_id,
        status,
        pending?.atMs ?? Date.now(),
        pending ? (pending.error ?? null) : 'the process running it ended before it did',
      );
      this.unrecordedEnds.delete(running.execution_id);
      if (closed) result.closed.push({ trade_id: running.trade_id, execution_id: running.execution_id, status });
      if (mine || this.stopped) continue;
      const trade = await getTrade(this.ctx, running.trade_id, { consistent: true });
      const input = trade && settlementInputFor(this.ctx, trade);
      if (trade && input && trade.trade_state !== 'terminated' && !this.executions.has(executionNameOfInput(input))) {
        await this.start(input);
        result.resumed.push(trade.trade_id);
      }
    }
    if (result.closed.length > 0) {
      this.ctx.logger.warn('closed settlement executions left running', {
        closed: result.closed.length,
        resumed: result.resumed,
      });
    }
    return result;
  }

  /**
   * Sweeps every `intervalMs` until stopped (a failed sweep is logged and tried again next time): executions
   * of dead processes, then, unless `filter` limits the sweep to some trades, the settlement sweep's handler
   * over every overdue open trade.
   */
  startSweeping(intervalMs: number, filter?: TradeIdFilter): void {
    clearInterval(this.sweepTimer);
    const sweepOverdue = asFunction(LOCAL_SWEEP_HANDLER, bindSweep(this.ctx));
    this.sweepTimer = setInterval(() => {
      this.sweepStranded(filter)
        .then(async () => {
          if (!filter && !this.stopped) await sweepOverdue();
        })
        .catch((error: Error) => {
          if (!this.stopped) this.ctx.logger.error('settlement sweep failed', { error: error.message });
        });
    }, intervalMs);
    this.sweepTimer.unref();
  }

  /**
   * The local counterpart of the sweep's DescribeExecution and start or redrive: starts the trade's execution
   * unless this runner is running it; one that ended without succeeding runs again (a new execution of the
   * trade, which its history shows beside the failed one).
   */
  async ensure(input: SettlementExecutionInput): Promise<EnsureOutcome> {
    const plan = this.ensurePlan(input);
    if (plan === 'running' || plan === 'finished') return plan;
    if (plan === 'redriven') this.executions.delete(executionNameOfInput(input));
    await this.start(input);
    return plan;
  }

  /** What `ensure` would do now: the caller's permission for it (Step Functions') is checked first. */
  ensurePlan(input: SettlementExecutionInput): EnsureOutcome {
    const existing = this.executions.get(executionNameOfInput(input));
    if (existing && existing.end === undefined) return 'running';
    if (existing && (existing.end === 'SUCCEEDED' || existing.end === 'SKIPPED')) return 'finished';
    return existing ? 'redriven' : 'started';
  }

  /**
   * Starts the execution `input` names (the trade's, or one of its later legs) unless this runner already has
   * it. Resolves once the execution is under way (its start recorded), not when it ends: `finished(name)`
   * waits for that.
   */
  async start(input: SettlementExecutionInput): Promise<void> {
    if (this.stopped) throw new Error('the local settlement runner is stopped');
    const name = executionNameOfInput(input);
    if (this.executions.has(name)) return;
    let markStarted!: () => void;
    const started = new Promise<void>((resolve) => (markStarted = resolve));
    const execution: LocalExecution = { finished: Promise.resolve('SKIPPED') };
    // Registered before the first await, so two concurrent starts of one execution can't both run.
    this.executions.set(name, execution);
    execution.finished = this.run(input, execution, markStarted);
    execution.finished.then(
      (end) => (execution.end = end),
      () => (execution.end = 'FAILED'),
    );
    // A failure before the start was recorded surfaces to the caller; later ones end up in the history.
    await Promise.race([started, execution.finished]);
  }

  /**
   * How the execution named `name` (a trade id: its first leg) ended in this runner (undefined if this runner
   * never started it).
   */
  finished(name: string): Promise<LocalExecutionEnd> | undefined {
    return this.executions.get(name)?.finished;
  }

  /** Names of the executions this runner started, running or ended, in order: a first leg's is its trade id. */
  tradeIds(): string[] {
    return [...this.executions.keys()];
  }

  /** Aborts every running execution and waits (briefly) for their histories to be written. */
  async stop(graceMs = 5_000): Promise<void> {
    this.stopped = true;
    clearInterval(this.sweepTimer);
    liveOwners.delete(this.owner);
    for (const execution of this.executions.values()) execution.abort?.();
    const ends = Promise.allSettled([...this.executions.values()].map((execution) => execution.finished));
    await Promise.race([ends, new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
  }

  private async run(
    input: SettlementExecutionInput,
    execution: LocalExecution,
    markStarted: () => void,
  ): Promise<LocalExecutionEnd> {
    const tradeId = input.trade_id;
    const name = executionNameOfInput(input);
    const { executions } = await settlementHistory(this.ctx, tradeId);
    if (executions.some((previous) => previous.status === 'SUCCEEDED' && previous.execution_name === name)) {
      markStarted();
      return 'SKIPPED';
    }

    const startedAt = Date.now();
    // Start time first, so execution ids sort in the order they ran.
    const executionId = `${String(startedAt).padStart(15, '0')}-${randomBytes(4).toString('hex')}`;
    await recordExecutionStart(this.ctx, tradeId, executionId, startedAt, this.owner, name);

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
    const legEndsAtMs = Date.parse(input.leg_ends_at);
    const waitsForLegEnd = input.continues === true;
    await sleepUntil(this.ctx, (waitsForLegEnd ? legEndsAtMs : settlementAtMs) - MAX_TIMER_MS, early.signal);
    if (aborted) {
      await this.recordEnd(tradeId, executionId, 'ABORTED');
      return 'ABORTED';
    }

    const run = this.machine.run(input as never, {
      noThrowOnAbort: true,
      overrides: {
        taskResourceLocalHandlers: this.tasks as never,
        waitTimeOverrides: firstWaitOnServiceClock(waitsForLegEnd, legEndsAtMs, settlementAtMs, this.ctx.clock.nowMs()),
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
      ({ status, error } = failedEnd(failure));
    }
    await recording;
    await this.recordEnd(tradeId, executionId, status, error);
    if (status === 'FAILED') this.ctx.logger.error('settlement execution failed', { trade_id: tradeId, error });
    return status;
  }

  /** Writes the engine's events in order. History is for people; a failed write is logged, never fatal. */
  private async record(tradeId: string, executionId: string, events: AsyncGenerator<EngineEvent>): Promise<void> {
    let sequence = 0;
    for await (const event of events) {
      const entry = historyEntry(event, ++sequence);
      if (entry) await this.safely(() => recordExecutionEvent(this.ctx, tradeId, executionId, entry));
    }
  }

  /** The execution's end; if it can't be written now, the next sweep writes it (it must not stay RUNNING). */
  private async recordEnd(
    tradeId: string,
    executionId: string,
    status: Exclude<ExecutionStatus, 'RUNNING'>,
    error?: string,
  ): Promise<void> {
    const atMs = Date.now();
    if (!(await this.safely(() => recordExecutionEnd(this.ctx, tradeId, executionId, status, atMs, error)))) {
      this.unrecordedEnds.set(executionId, { tradeId, status, atMs, error });
    }
  }

  private async safely(write: () => Promise<void>): Promise<boolean> {
    try {
      await write();
      return true;
    } catch (error) {
      if (!this.stopped) this.ctx.logger.warn('settlement history not written', { error: (error as Error).message });
      return false;
    }
  }
}

/**
 * The engine's first wait, measured on the service clock (tests move it). A leg end reached later, from the
 * sessions, is waited for by the engine against the real clock (a session or less away).
 */
function firstWaitOnServiceClock(
  waitsForLegEnd: boolean,
  legEndsAtMs: number,
  settlementAtMs: number,
  nowMs: number,
): Record<string, number> {
  return waitsForLegEnd
    ? { [SETTLEMENT_STATE_NAMES.waitForEndOfExecution]: Math.max(0, legEndsAtMs - nowMs) }
    : { [SETTLEMENT_STATE_NAMES.waitForSettlementTime]: Math.max(0, settlementAtMs - nowMs) };
}

/** An execution the engine ended with an error: timed out or failed, and the message (with its cause) to record. */
function failedEnd(failure: unknown): { status: 'TIMED_OUT' | 'FAILED'; error: string } {
  return {
    status: failure instanceof ExecutionTimeoutError ? 'TIMED_OUT' : 'FAILED',
    error:
      failure instanceof Error
        ? `${failure.message}${failure.cause instanceof Error ? `: ${failure.cause.message}` : ''}`
        : String(failure),
  };
}

/** The longest delay Node's timers honour; a longer one fires after 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Resolves once the service clock reaches `atMs` (at once if it has), or when `signal` aborts. */
async function sleepUntil(ctx: AppContext, atMs: number, signal: AbortSignal): Promise<void> {
  while (!signal.aborted && ctx.clock.nowMs() < atMs) {
    try {
      await sleep(Math.min(atMs - ctx.clock.nowMs(), MAX_TIMER_MS), undefined, { signal });
    } catch {
      return; // aborted
    }
  }
}

/**
 * What the history records of a task's result: its outcome and whether it was past the deadline, each null
 * when the result lacks it (or holds something else: the workflow's Choice states judge the result, not this).
 */
const recordedTaskResult = z.object({
  outcome: z.catch(z.nullable(z.string()), null),
  past_deadline: z.catch(z.nullable(z.boolean()), null),
});

function historyEntry(event: EngineEvent, sequence: number): SettlementEvent | undefined {
  const base = {
    sequence,
    type: event.type,
    at: event.timestamp,
    state: null,
    state_type: null,
    outcome: null,
    past_deadline: null,
    error: null,
  };
  if (!('state' in event)) {
    return 'Error' in event ? { ...base, error: `${event.Error}: ${describeCause(event.Cause)}` } : base;
  }
  const entry: SettlementEvent = { ...base, state: event.state.name, state_type: event.state.type };
  if (event.type === 'StateExited') {
    const key = TASK_RESULT_KEYS[event.state.name];
    const result = key ? (event.state.output as Record<string, unknown> | undefined)?.[key] : undefined;
    const recorded = recordedTaskResult.safeParse(result);
    if (recorded.success) {
      entry.outcome = recorded.data.outcome;
      entry.past_deadline = recorded.data.past_deadline;
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
  /** How often the sweep closes executions whose process died (default 60 s; 0: never). */
  sweepIntervalMs?: number;
  /** Which trades the sweep may touch (tests: their own); by default those `resume` accepts. */
  sweepFilter?: TradeIdFilter;
}

/** The sweep's view of a trade filter: by id, reading the trade. */
function tradeIdFilter(ctx: AppContext, filter: (trade: Trade) => boolean): TradeIdFilter {
  return async (tradeId) => {
    const trade = await getTrade(ctx, tradeId, { consistent: true });
    return trade !== undefined && filter(trade);
  };
}

/**
 * Resumes every open trade (or those `filter` accepts) on `runner`, after closing the executions a dead
 * process left RUNNING (of any trade, open or not). Returns the trade ids started.
 */
export async function resumeOpenTrades(
  ctx: AppContext,
  runner: LocalSettlementRunner,
  filter: (trade: Trade) => boolean = () => true,
  sweepFilter: TradeIdFilter = tradeIdFilter(ctx, filter),
): Promise<string[]> {
  const swept = await runner.sweepStranded(sweepFilter);
  const trades = (await listOpenTrades(ctx)).filter(filter).filter((trade) => !swept.resumed.includes(trade.trade_id));
  await Promise.all(
    trades.map(async (trade) => {
      // Runs left RUNNING by a process that died are over; say so before this process runs its own.
      await interruptRunningExecutions(ctx, trade.trade_id, Date.now());
      await runner.start(settlementInputFor(ctx, trade));
    }),
  );
  return [...swept.resumed, ...trades.map((trade) => trade.trade_id)];
}

export interface LocalWorkflows {
  /** `ctx` with its workflow set to the runner: bind handlers to this one so `POST /trades` starts executions here. */
  ctx: AppContext;
  runner: LocalSettlementRunner;
  /** Aborts running executions (and refuses new ones). */
  stop: () => Promise<void>;
}

/**
 * Starts the local runner for `ctx`, resumes open trades (closing first the executions a dead process left
 * RUNNING) and sweeps for such executions every `sweepIntervalMs`. The returned context is `ctx` with the
 * runner as its settlement workflow; the runner's tasks run with it too.
 */
export async function startLocalWorkflows(
  ctx: AppContext,
  options: StartLocalWorkflowsOptions = {},
): Promise<LocalWorkflows> {
  let runner!: LocalSettlementRunner;
  const withRunner: AppContext = { ...ctx, workflow: authorizedWorkflow(ctx, () => runner) };
  runner = new LocalSettlementRunner(withRunner, options);
  const resume = options.resume ?? true;
  const tradeFilter = typeof resume === 'function' ? resume : undefined;
  const sweepFilter = options.sweepFilter ?? (tradeFilter && tradeIdFilter(withRunner, tradeFilter));
  if (resume) {
    const resumed = await resumeOpenTrades(withRunner, runner, tradeFilter, sweepFilter);
    if (resumed.length > 0) ctx.logger.info(`Resumed settlement of ${resumed.length} open trade(s)`);
  }
  const sweepIntervalMs = options.sweepIntervalMs ?? 60_000;
  if (sweepIntervalMs > 0) runner.startSweeping(sweepIntervalMs, sweepFilter);
  return { ctx: withRunner, runner, stop: () => runner.stop() };
}

/**
 * The runner as a function reaches Step Functions: the calling function's role must allow what the call
 * does on AWS (StartExecution; DescribeExecution and then StartExecution or RedriveExecution for `ensure`).
 * Once allowed, the runner works as Step Functions does, on its own behalf (`asService`): its history
 * records are not the caller's calls, and its tasks run as their own functions.
 */
function authorizedWorkflow(ctx: AppContext, runner: () => LocalSettlementRunner): AppContext['workflow'] {
  const executionArn = (machine: string, input: SettlementExecutionInput) =>
    `${machine.replace(':stateMachine:', ':execution:')}:${executionNameOfInput(input)}`;
  return {
    async start(input) {
      await authorizeLocal(ctx, (iam) => [
        { action: 'states:StartExecution', resource: iam.resources.settlementStateMachine },
      ]);
      return asService(() => runner().start(input));
    },
    async ensure(input) {
      const plan = runner().ensurePlan(input);
      await authorizeLocal(ctx, (iam) => {
        const machine = iam.resources.settlementStateMachine;
        const execution = executionArn(machine, input);
        return [
          { action: 'states:DescribeExecution', resource: execution },
          ...(plan === 'started' ? [{ action: 'states:StartExecution', resource: machine }] : []),
          ...(plan === 'redriven' ? [{ action: 'states:RedriveExecution', resource: execution }] : []),
        ];
      });
      return asService(() => runner().ensure(input));
    },
  };
}
