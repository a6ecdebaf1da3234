/**
 * The settlement workflow, in Amazon States Language. One definition feeds both the CDK stack
 * (`DefinitionBody.fromString(JSON.stringify(...))`) and the local runner (aws-local-stepfunctions), so what is
 * tested locally is what runs in AWS. No CDK imports: this module must load in the local runtime and in tests.
 *
 * One execution per trade and leg: named by `trade_id`, later legs `<trade_id>-<n>` (a Standard execution
 * lasts at most a year, and its history 25,000 events). All state lives in DynamoDB and every task is
 * idempotent, so a task retried after a timeout, or an execution restarted for a trade that was already
 * moved, is harmless.
 *
 *   Settles in this execution?  no (settlement after the leg) -> Wait for end of this execution
 *   yes -> Wait for settlement time -> Activate trade -> Attempt settlement -> Settled?
 *     settled | defaulted | terminated -> Done
 *     outstanding -> Past deadline?  yes -> Default trade -> Done
 *                                    leg over (next session after the leg's end) -> Wait for end of this execution
 *                                    no  -> Wait for next session -> Attempt settlement
 *   Wait for end of this execution -> Continue in next execution (starts leg n+1) -> Done
 *
 * A funded trade enters six states (choice, wait, activate, attempt, choice, done); each extra session costs
 * four; a leg that only waits costs four.
 */

export {
  settlementExecutionInput,
  type SettlementExecutionInput,
  type SettlementTaskInput,
  type SettlementTaskOutcome,
  type SettlementTaskResult,
} from '../lib/domain/workflow-io.js';

export const SETTLEMENT_STATE_NAMES = {
  settlesInThisExecution: 'Settles in this execution?',
  waitForSettlementTime: 'Wait for settlement time',
  activateTrade: 'Activate trade',
  attemptSettlement: 'Attempt settlement',
  settled: 'Settled?',
  pastDeadline: 'Past deadline?',
  defaultTrade: 'Default trade',
  waitForNextSession: 'Wait for next session',
  waitForEndOfExecution: 'Wait for end of this execution',
  continueInNextExecution: 'Continue in next execution',
  done: 'Done',
} as const;

export type SettlementStateName = (typeof SETTLEMENT_STATE_NAMES)[keyof typeof SETTLEMENT_STATE_NAMES];

export interface SettlementWorkflowResources {
  /** Lambda ARNs (or CDK tokens resolving to them); invoked directly, so the task input is the Lambda event. */
  activate: string;
  attempt: string;
  default: string;
  /** Starts the trade's next leg (the next execution). */
  continue: string;
}

export interface SettlementWorkflowOptions {
  /** Above the tasks' Lambda timeout, so Step Functions never gives up on an invocation Lambda still runs. */
  taskTimeoutSeconds?: number;
  /** Retries of a failed task (function error, timeout, throttling) before the execution fails. */
  retry?: { intervalSeconds?: number; maxAttempts?: number; backoffRate?: number; maxDelaySeconds?: number };
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type AslDefinition = { [key: string]: Json };

/** Errors the Lambda service itself raises (throttling, cold-start and SDK failures): always worth a fast retry. */
const LAMBDA_SERVICE_ERRORS = [
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.TooManyRequestsException',
  'Lambda.ClientExecutionTimeoutException',
];

export function settlementWorkflowDefinition(
  resources: SettlementWorkflowResources,
  options: SettlementWorkflowOptions = {},
): AslDefinition {
  const task = taskStateFactory(options);
  return {
    Comment:
      'Settles one reported trade: waits for its settlement time, attempts each session until settled or past its deadline.',
    StartAt: SETTLEMENT_STATE_NAMES.settlesInThisExecution,
    // The groups are spread in this order so the states keep the order of the deployed definition string.
    States: {
      ...startStates(resources, task),
      ...settlementLoopStates(resources, task),
      ...legHandOverStates(resources, task),
      [SETTLEMENT_STATE_NAMES.done]: { Type: 'Succeed' },
    },
  };
}

/** Builds a Task state: `(resource, resultPath, next, comment, extra parameters)`. */
type TaskState = (
  resource: string,
  resultPath: string,
  next: string,
  comment: string,
  parameters?: Record<string, string>,
) => AslDefinition;

/** Every task state invokes a Lambda with the trade id, keeps its input, and retries the same way. */
function taskStateFactory(options: SettlementWorkflowOptions): TaskState {
  const retry = {
    intervalSeconds: options.retry?.intervalSeconds ?? 2,
    maxAttempts: options.retry?.maxAttempts ?? 6,
    backoffRate: options.retry?.backoffRate ?? 2,
    maxDelaySeconds: options.retry?.maxDelaySeconds ?? 120,
  };
  return (resource, resultPath, next, comment, parameters = {}) => ({
    Type: 'Task',
    Comment: comment,
    Resource: resource,
    Parameters: { 'trade_id.$': '$.trade_id', ...parameters },
    // Results go beside the input so trade_id, settlement_at and session_interval_seconds survive every loop.
    ResultPath: resultPath,
    TimeoutSeconds: options.taskTimeoutSeconds ?? 120,
    Retry: [
      {
        ErrorEquals: LAMBDA_SERVICE_ERRORS,
        IntervalSeconds: 1,
        MaxAttempts: retry.maxAttempts,
        BackoffRate: retry.backoffRate,
        MaxDelaySeconds: retry.maxDelaySeconds,
        JitterStrategy: 'FULL',
      },
      {
        // A task that failed or timed out wrote nothing or wrote conditionally; running it again is safe.
        ErrorEquals: ['States.TaskFailed', 'States.Timeout'],
        IntervalSeconds: retry.intervalSeconds,
        MaxAttempts: retry.maxAttempts,
        BackoffRate: retry.backoffRate,
        MaxDelaySeconds: retry.maxDelaySeconds,
        JitterStrategy: 'FULL',
      },
    ],
    Next: next,
  });
}

/** The way in: a leg that ends before the settlement time only waits; otherwise wait for it and activate. */
function startStates(resources: SettlementWorkflowResources, task: TaskState): AslDefinition {
  const S = SETTLEMENT_STATE_NAMES;
  return {
    [S.settlesInThisExecution]: {
      Type: 'Choice',
      Comment: 'A settlement time after this leg ends: this execution only waits, then hands over to the next.',
      Choices: [
        {
          And: [
            { Variable: '$.continues', IsPresent: true },
            { Variable: '$.continues', BooleanEquals: true },
          ],
          Next: S.waitForEndOfExecution,
        },
      ],
      Default: S.waitForSettlementTime,
    },
    [S.waitForSettlementTime]: {
      Type: 'Wait',
      Comment: 'Until settlement_at; a time already past continues at once.',
      TimestampPath: '$.settlement_at',
      Next: S.activateTrade,
    },
    [S.activateTrade]: task(resources.activate, '$.activation', S.attemptSettlement, 'accepted -> active'),
  };
}

/**
 * The settlement loop: one attempt per session until the trade settles, defaults or is terminated, it passes
 * its deadline (default it), or the leg runs out (hand over to the next execution).
 */
function settlementLoopStates(resources: SettlementWorkflowResources, task: TaskState): AslDefinition {
  const S = SETTLEMENT_STATE_NAMES;
  return {
    [S.attemptSettlement]: task(
      resources.attempt,
      '$.attempt',
      S.settled,
      'Checks every settling party; all covered -> both legs move in one transaction.',
      { 'leg_ends_at.$': '$.leg_ends_at' },
    ),
    [S.settled]: {
      Type: 'Choice',
      Comment: 'No Default: an outcome outside the task contract fails the execution where ops can see it.',
      Choices: [
        {
          Or: [
            { Variable: '$.attempt.outcome', StringEquals: 'settled' },
            { Variable: '$.attempt.outcome', StringEquals: 'defaulted' },
            { Variable: '$.attempt.outcome', StringEquals: 'terminated' },
          ],
          Next: S.done,
        },
        { Variable: '$.attempt.outcome', StringEquals: 'outstanding', Next: S.pastDeadline },
      ],
    },
    [S.pastDeadline]: {
      Type: 'Choice',
      Choices: [
        {
          And: [
            { Variable: '$.attempt.past_deadline', IsPresent: true },
            { Variable: '$.attempt.past_deadline', BooleanEquals: true },
          ],
          Next: S.defaultTrade,
        },
        {
          And: [
            { Variable: '$.attempt.leg_over', IsPresent: true },
            { Variable: '$.attempt.leg_over', BooleanEquals: true },
          ],
          Next: S.waitForEndOfExecution,
        },
      ],
      Default: S.waitForNextSession,
    },
    [S.defaultTrade]: task(
      resources.default,
      '$.default',
      S.done,
      'Terminates the trade as defaulted; balances untouched.',
    ),
    [S.waitForNextSession]: {
      Type: 'Wait',
      SecondsPath: '$.session_interval_seconds',
      Next: S.attemptSettlement,
    },
  };
}

/**
 * The leg hand-over: an execution may last a year and 25,000 events, so a long settlement waits out this leg
 * and starts the next execution, which picks up where this one stopped.
 */
function legHandOverStates(resources: SettlementWorkflowResources, task: TaskState): AslDefinition {
  const S = SETTLEMENT_STATE_NAMES;
  return {
    [S.waitForEndOfExecution]: {
      Type: 'Wait',
      TimestampPath: '$.leg_ends_at',
      Next: S.continueInNextExecution,
    },
    [S.continueInNextExecution]: task(
      resources.continue,
      '$.continuation',
      S.done,
      'Starts the next leg, named <trade_id>-<n>; a repeated start of the same leg is harmless.',
      { 'leg.$': '$.leg' },
    ),
  };
}
