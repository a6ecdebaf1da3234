import { ArnFormat, Duration, Fn, Validations } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Grant, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { MAIN_TABLE } from '../lib/store/table/tables.js';
import type { Route } from './routes.js';
import type { ServiceEnvironment, ServiceFunction } from './service-function.js';
import { settlementWorkflowDefinition, type SettlementWorkflowResources } from './settlement-workflow.js';
import { grantBookingQueue, grantTable, RESERVED_CONCURRENCY, type StackBase } from './stack-base.js';

/** The workflow's task handlers, by the resource name `settlementWorkflowDefinition` expects. */
export const SETTLEMENT_TASK_HANDLERS: Record<keyof SettlementWorkflowResources, string> = {
  activate: 'functions/settlement/activate-trade.ts',
  attempt: 'functions/settlement/attempt-settlement.ts',
  default: 'functions/settlement/default-trade.ts',
  continue: 'functions/settlement/continue-settlement.ts',
};

/** The scheduled function that revives open trades without a live execution. */
export const SETTLEMENT_SWEEP_HANDLER = 'functions/settlement/sweep-open-trades.ts';

/** Routes whose handler starts a settlement execution. */
export const SETTLEMENT_STARTING_ROUTES: readonly Pick<Route, 'method' | 'path'>[] = [
  { method: 'POST', path: '/trades' },
];

/** Every execution of the state machine named `Name` (an `Fn::Sub` pattern). */
const EXECUTIONS_OF_STATE_MACHINE = 'arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:execution:${Name}:*';

/** Tasks touch DynamoDB only; the margin leaves Step Functions' task timeout above the Lambda's own. */
const SETTLEMENT_TASK_TIMEOUT = Duration.seconds(60);
const SETTLEMENT_TASK_TIMEOUT_MARGIN = Duration.seconds(30);

/**
 * The settlement workflow: a Standard state machine whose tasks are four Lambdas, and
 * StartExecution for the routes that store trades.
 */
export function addSettlementWorkflow(base: StackBase, handlers: Record<keyof SettlementWorkflowResources, string>) {
  const { stack } = base;
  // Named here rather than by CloudFormation: the continue task starts the machine's next execution, and a
  // reference to the machine from its own task function would be a dependency cycle (the machine's
  // definition names the function). The ARN is built from the name instead.
  const stateMachineName = `${stack.stackName}-settlement`;
  const stateMachineArn = stack.formatArn({
    service: 'states',
    resource: 'stateMachine',
    resourceName: stateMachineName,
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });
  const tasks = addSettlementTasks(base, handlers, stateMachineArn);
  const stateMachine = addSettlementStateMachine(base, tasks, stateMachineName);
  const { sweep, sweepDeadLetters } = addOpenTradeSweep(base, stateMachine);
  letRoutesStartSettlement(base, stateMachine);
  return { stateMachine, sweep, sweepDeadLetters };
}

type SettlementTasks = Record<keyof SettlementWorkflowResources, ServiceFunction>;

/**
 * The four task functions. Added in this order because the throttle alarms group functions ten at a time, and
 * the dashboard lists them, in the order they were added.
 */
function addSettlementTasks(
  base: StackBase,
  handlers: Record<keyof SettlementWorkflowResources, string>,
  stateMachineArn: string,
): SettlementTasks {
  const task = (name: keyof SettlementWorkflowResources) => {
    const startsExecutions = name === 'continue';
    const fn = base.addFunction(`Settlement${name[0]!.toUpperCase()}${name.slice(1)}Task`, `settlement task: ${name}`, {
      handler: handlers[name],
      description: `settlement workflow: ${name}`,
      environment: startsExecutions ? { ...base.environment, STATE_MACHINE_ARN: stateMachineArn } : base.environment,
      timeout: SETTLEMENT_TASK_TIMEOUT,
      reservedConcurrentExecutions: RESERVED_CONCURRENCY.settlementTask,
    });
    // Tasks move trades and balances; they neither authenticate callers nor keep request windows.
    grantTable(fn.function, base.mainTable, MAIN_TABLE, 'write');
    // The attempt books the trade's settlement through the group-commit engine.
    if (name === 'attempt') grantBookingQueue(fn.function, base.mainTable);
    if (startsExecutions)
      fn.function.addToRolePolicy(
        new PolicyStatement({ actions: ['states:StartExecution'], resources: [stateMachineArn] }),
      );
    return fn;
  };
  return {
    activate: task('activate'),
    attempt: task('attempt'),
    default: task('default'),
    continue: task('continue'),
  };
}

/** The state machine on the shared definition, its error log and the right to invoke its task functions. */
function addSettlementStateMachine(base: StackBase, tasks: SettlementTasks, stateMachineName: string): StateMachine {
  const { stack } = base;
  const definition = settlementWorkflowDefinition(
    {
      activate: tasks.activate.function.functionArn,
      attempt: tasks.attempt.function.functionArn,
      default: tasks.default.function.functionArn,
      continue: tasks.continue.function.functionArn,
    },
    { taskTimeoutSeconds: SETTLEMENT_TASK_TIMEOUT.plus(SETTLEMENT_TASK_TIMEOUT_MARGIN).toSeconds() },
  );

  // Under /aws/vendedlogs/, as AWS advises for Step Functions: its log delivery lists every other group it
  // writes to in the account's CloudWatch Logs resource policy (5,120 characters, shared by every service that
  // delivers logs), and a full policy makes a deploy fail; this prefix is covered by one entry for all groups.
  const logs = new LogGroup(stack, 'SettlementWorkflowLogs', {
    logGroupName: `/aws/vendedlogs/states/${stateMachineName}`,
    retention: RetentionDays.ONE_MONTH,
  });
  const stateMachine = new StateMachine(stack, 'SettlementWorkflow', {
    stateMachineName,
    stateMachineType: StateMachineType.STANDARD,
    definitionBody: DefinitionBody.fromString(JSON.stringify(definition)),
    tracingEnabled: true,
    // Failures only, without execution data (trade amounts and parties): each execution's own history,
    // kept by Step Functions for 90 days, already has every transition for `trade history`.
    logs: { destination: logs, level: LogLevel.ERROR, includeExecutionData: false },
  });
  // A string definition hides its task resources from CDK, so invoke rights are granted by hand, on the
  // functions themselves (grantInvoke would add every version and alias: `arn:*`).
  stateMachine.addToRolePolicy(
    new PolicyStatement({
      actions: ['lambda:InvokeFunction'],
      resources: Object.values(tasks).map((task) => task.function.functionArn),
    }),
  );
  Validations.of(stateMachine).acknowledge(
    {
      id: 'AwsSolutions::AwsSolutions-SF1',
      reason:
        'Logged at ERROR without execution data on purpose (trade data stays out of logs); the execution history has every event.',
    },
    {
      id: 'AwsSolutions::AwsSolutions-IAM5[Resource::*]',
      reason:
        'CloudWatch Logs delivery and X-Ray actions that Step Functions logging and tracing need have no resource-level permissions.',
    },
  );
  return stateMachine;
}

/**
 * Nothing may strand a trade: a scheduled sweep starts an execution for any open trade that lacks one and
 * redrives failed ones. Tasks are idempotent, so a sweep racing a live run is harmless.
 */
function addOpenTradeSweep(base: StackBase, stateMachine: StateMachine) {
  const { stack } = base;
  // Invoked asynchronously by the schedule: a run that fails after Lambda's retries (or that EventBridge
  // cannot deliver) is kept here, and alarmed on, instead of vanishing.
  const sweepDeadLetters = new Queue(stack, 'OpenTradeSweepDeadLetters', {
    retentionPeriod: Duration.days(14),
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
  });
  const sweep = base.addFunction('OpenTradeSweep', 'the scheduled settlement sweep', {
    handler: SETTLEMENT_SWEEP_HANDLER,
    description: 'settlement workflow: revive overdue open trades (no live execution)',
    environment: { ...base.environment, STATE_MACHINE_ARN: stateMachine.stateMachineArn },
    timeout: Duration.minutes(5),
    deadLetterQueue: sweepDeadLetters,
    reservedConcurrentExecutions: RESERVED_CONCURRENCY.settlementSweep,
  });
  grantTable(sweep.function, base.mainTable, MAIN_TABLE, 'read');
  // It moves a visited trade's due time on the open-trades index (one conditioned UpdateItem), nothing else.
  Grant.addToPrincipal({
    grantee: sweep.function,
    actions: ['dynamodb:UpdateItem'],
    resourceArns: [base.mainTable.tableArn],
  });
  stateMachine.grantStartExecution(sweep.function);
  // Not grantRead: that adds execution histories, listings and activities the sweep never asks for. Executions
  // are named by trade id, so only a pattern under this state machine can name them.
  sweep.function.addToRolePolicy(
    new PolicyStatement({
      actions: ['states:DescribeExecution', 'states:RedriveExecution'],
      resources: [Fn.sub(EXECUTIONS_OF_STATE_MACHINE, { Name: stateMachine.stateMachineName })],
    }),
  );
  Validations.of(sweep).acknowledge({
    // cdk-nag names the finding by the resolved Fn::Sub arguments.
    id: `AwsSolutions::AwsSolutions-IAM5[Resource::${JSON.stringify([EXECUTIONS_OF_STATE_MACHINE, { Name: stack.resolve(stateMachine.stateMachineName) }])}]`,
    reason: 'Executions are named by trade id at run time: only a pattern under this one state machine can name them.',
  });
  new Rule(stack, 'OpenTradeSweepSchedule', {
    schedule: Schedule.rate(Duration.minutes(5)),
    targets: [new LambdaFunction(sweep.function, { deadLetterQueue: sweepDeadLetters, retryAttempts: 2 })],
  });
  return { sweep, sweepDeadLetters };
}

/** The routes that store trades start each trade's first execution themselves. */
function letRoutesStartSettlement(base: StackBase, stateMachine: StateMachine): void {
  for (const [route, fn] of base.routeFunctions) {
    if (!SETTLEMENT_STARTING_ROUTES.some((r) => r.method === route.method && r.path === route.path)) continue;
    const variable: keyof ServiceEnvironment = 'STATE_MACHINE_ARN';
    fn.function.addEnvironment(variable, stateMachine.stateMachineArn);
    stateMachine.grantStartExecution(fn.function);
  }
}
