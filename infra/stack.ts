import { ArnFormat, CfnOutput, Duration, Fn, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  EndpointType,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  type RequestValidator,
  MockIntegration,
  PassthroughBehavior,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import {
  AttributeType,
  BillingMode,
  ProjectionType,
  StreamViewType,
  Table,
  type TableProps,
} from 'aws-cdk-lib/aws-dynamodb';
import { Grant, type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { FilterCriteria, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { DISPATCH_FILTER_PATTERN } from '../lib/webhooks/stream-records.js';
import type { Construct } from 'constructs';
import type { Config } from '../lib/config.js';
import { MAIN_TABLE, TTL_TABLE, type TableDefinition } from '../lib/store/table/tables.js';
import { ApiFirewallStack } from './api-firewall-stack.js';
import { LedgerCheckStack } from './ledger-check-stack.js';
import { ALARM_EMAIL_CONTEXT, type MonitoredFunction, ServiceMonitoring } from './monitoring.js';
import { routeId, routes, type Route } from './routes.js';
import { API_FUNCTION_TIMEOUT, ServiceFunction, type ServiceEnvironment } from './service-function.js';
import { settlementWorkflowDefinition, type SettlementWorkflowResources } from './settlement-workflow.js';

/** Business settings the functions read from the environment; on AWS sessions are hours apart, not seconds. */
export interface ServiceSettings {
  quoteTtlSeconds: number;
  priceMaxAgeSeconds: number;
  settlementSessionSeconds: number;
  spotSettlementDeadlineSeconds: number;
  /** Overdue trades one sweep invocation revives at most (the next one, 5 minutes later, takes the rest). */
  settlementSweepMaxTrades: number;
  /** One execution's share of a long settlement (under Step Functions' one year and 25,000 events). */
  settlementLegSeconds: number;
  /** Empty: the design's schedule (5 s ... 24 h). */
  webhookRetryScheduleSeconds: string;
  logLevel: Config['LOG_LEVEL'];
  /** Each API key's rate limit unless ops set its platform's (`platform limits`): RATE_LIMIT_RPS and RATE_LIMIT_BURST. */
  rateLimitRps: number;
  rateLimitBurst: number;
  /**
   * The WAF rule's ceiling per API key over 60 s, the coarse guard before any function runs. Half the stage's
   * rate (100/s, 6,000 a minute): no one key holds more than half the stage for long. A platform given more
   * than 50/s by ops needs this (and the stage throttle) raised too.
   */
  wafRequestsPerKeyPerMinute: number;
}

export const DEFAULT_SETTINGS: ServiceSettings = {
  quoteTtlSeconds: 30,
  priceMaxAgeSeconds: 300,
  settlementSessionSeconds: 3600,
  spotSettlementDeadlineSeconds: 172800,
  settlementSweepMaxTrades: 1000,
  settlementLegSeconds: 30 * 24 * 3600,
  webhookRetryScheduleSeconds: '',
  logLevel: 'info',
  rateLimitRps: 20,
  rateLimitBurst: 40,
  wafRequestsPerKeyPerMinute: 3000,
};

export interface TradingSettlementStackProps extends StackProps {
  settings?: Partial<ServiceSettings>;
  /** The route table; only tests pass another one (nested paths and routes not written yet). */
  routes?: readonly Route[];
  /** Where the workflow's task handlers live; only tests pass others, to synthesize the workflow early. */
  settlementTaskHandlers?: Record<keyof SettlementWorkflowResources, string>;
  /** Subscribed to the alarm topic; defaults to the `alarmEmail` context value. */
  alarmEmail?: string;
}

/** The workflow's task handlers, by the resource name `settlementWorkflowDefinition` expects. */
export const SETTLEMENT_TASK_HANDLERS: Record<keyof SettlementWorkflowResources, string> = {
  activate: 'functions/settlement/activate-trade.ts',
  attempt: 'functions/settlement/attempt-settlement.ts',
  default: 'functions/settlement/default-trade.ts',
  continue: 'functions/settlement/continue-settlement.ts',
};

/**
 * Functions that outside systems reach with events rather than HTTP requests, each through an SQS FIFO queue
 * of its own: the bank's payment status changes and the custodian's withdrawal outcomes. Each event applies a
 * state change conditioned on the current state, so redelivered events are harmless.
 */
export const EVENT_HANDLERS = {
  BankEvents: 'functions/payments/apply-bank-event.ts',
  CustodyEvents: 'functions/withdrawals/apply-custody-event.ts',
} as const;

/** What ops do with a dead letter of each event queue (the alarm's description). */
const EVENT_DEAD_LETTER_RUNBOOK: Record<keyof typeof EVENT_HANDLERS, string> = {
  BankEvents:
    "Each message is a bank payment event that failed 5 times (the function's errors are in its log group). " +
    'Fix the cause, then redrive the queue to its source queue (SQS console: Start DLQ redrive): applying an event twice is harmless.',
  CustodyEvents:
    "Each message is a custody withdrawal outcome that failed 5 times (the function's errors are in its log group). " +
    'Fix the cause, then redrive the queue to its source queue (SQS console: Start DLQ redrive): applying an event twice is harmless.',
};

/**
 * Reserved concurrency: what these functions keep for themselves, so API traffic using the
 * account's Lambda concurrency cannot throttle them, and their ceiling. 117 in all; Lambda keeps at least 100
 * unreserved, so the account needs a concurrency quota of 217 or more (the default is 1,000; README, Deploy).
 */
export const RESERVED_CONCURRENCY = {
  /**
   * Per settlement task. A task is a few DynamoDB calls (about 100 ms): 10 at once run about 100 tasks a second
   * of each kind, while settling 500 trades in a minute (the bench's goal) needs about 25 a second of all
   * four. A throttled task is retried by the state machine (Lambda.TooManyRequestsException).
   */
  settlementTask: 10,
  /** The open-trade sweep runs every 5 minutes for up to 5: two may overlap. */
  settlementSweep: 2,
  /**
   * Bank and custody events: FIFO queues whose batches of 10 take about a second; 5 at once apply about 50
   * events a second per queue, more than a bank's payment file or a custodian's outcomes arrive at.
   */
  eventConsumer: 5,
  /** The stream dispatcher runs one batch per stream shard at a time; 10 covers the shards of a busy on-demand table. */
  webhookDispatcher: 10,
  /** The delivery queue's event source runs up to 50 at once (maxConcurrency); reserving less would throttle it. */
  webhookDelivery: 50,
  /** The webhook sweep runs every minute for up to 5: five may overlap. */
  webhookSweep: 5,
} as const;

/** Deliveries of one event before it moves to the dead-letter queue. */
const EVENT_MAX_RECEIVES = 5;

/** The scheduled function that revives open trades without a live execution. */
export const SETTLEMENT_SWEEP_HANDLER = 'functions/settlement/sweep-open-trades.ts';

/** The webhook functions: stream dispatcher, queue worker, scheduled sweep. */
export const WEBHOOK_HANDLERS = {
  dispatcher: 'functions/webhooks/dispatch-events.ts',
  delivery: 'functions/webhooks/deliver-webhooks.ts',
  sweep: 'functions/webhooks/sweep-webhooks.ts',
} as const;

/** A delivery attempt takes at most the 15-second send plus a few reads and writes. */
const WEBHOOK_DELIVERY_TIMEOUT = Duration.seconds(60);

/** Routes whose handler starts a settlement execution. */
export const SETTLEMENT_STARTING_ROUTES: readonly Pick<Route, 'method' | 'path'>[] = [
  { method: 'POST', path: '/trades' },
];

/** The API's one stage (the first segment of every URL). */
const API_STAGE = 'v1';

/** Every execution of the state machine named `Name` (an `Fn::Sub` pattern). */
const EXECUTIONS_OF_STATE_MACHINE = 'arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:execution:${Name}:*';

/** Tasks touch DynamoDB only; the margin leaves Step Functions' task timeout above the Lambda's own. */
const SETTLEMENT_TASK_TIMEOUT = Duration.seconds(60);
const SETTLEMENT_TASK_TIMEOUT_MARGIN = Duration.seconds(30);

export class TradingSettlementStack extends Stack {
  readonly mainTable: Table;
  readonly ttlTable: Table;
  readonly secretsKey: Key;
  readonly api: RestApi;
  /** One function per row of the route table, keyed by the row. */
  readonly routeFunctions = new Map<Route, ServiceFunction>();
  readonly settlementWorkflow: StateMachine;
  readonly listCursorKey: Secret;
  readonly eventFunctions: Map<string, ServiceFunction>;
  /** The queue each event function consumes, by the same id; the integrations (and the ops CLI) send to it. */
  readonly eventQueues = new Map<string, { queue: Queue; deadLetters: Queue }>();
  readonly sweepFunction: ServiceFunction;
  /** The hourly ledger check, in a nested stack of its own. */
  readonly ledgerCheck: LedgerCheckStack;
  readonly monitoring: ServiceMonitoring;
  /** The API stage's WAF web ACL, a rate-based rule per API key, in a nested stack of its own. */
  readonly apiFirewall: ApiFirewallStack;
  /** Every Lambda of the stack by construct id, for alarms and the dashboard. */
  private readonly monitoredFunctions: MonitoredFunction[] = [];
  private requestValidator!: RequestValidator;

  // Not `environment`: Stack already uses that name for its account/region.
  private readonly functionEnvironment: ServiceEnvironment;

  constructor(scope: Construct, id: string, props: TradingSettlementStackProps = {}) {
    // No CDKMetadata resource: the stack is at CloudFormation's 500 resources, and that one only reports the CDK's version to AWS.
    super(scope, id, { analyticsReporting: false, ...props });
    const settings = { ...DEFAULT_SETTINGS, ...props.settings };

    this.mainTable = tableFrom(this, 'MainTable', MAIN_TABLE, {
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // The ledger lives here: nobody should be able to drop it by accident, in CloudFormation or the console.
      deletionProtection: true,
      // Lets a consumer pick up trades stored without a started execution.
      stream: StreamViewType.NEW_AND_OLD_IMAGES,
    });
    // Windows of 72 hours at most, but they are what stops a duplicated booking: losing them to a bad write
    // or a dropped table would let a retried request book twice, so they get the same protection.
    this.ttlTable = tableFrom(this, 'TtlTable', TTL_TABLE, {
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
    });

    this.secretsKey = new Key(this, 'ApiSecretsKey', {
      description: 'Encrypts API secrets; the HMAC needs them back, so they are encrypted rather than hashed.',
      enableKeyRotation: true,
      // Without the key every stored API secret is unreadable.
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.listCursorKey = new Secret(this, 'ListCursorKey', {
      description: 'HMAC key of the list cursors (next_cursor) the API issues.',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
    });
    Validations.of(this.listCursorKey).acknowledge({
      id: 'AwsSolutions::AwsSolutions-SMG4',
      reason:
        'Cursor tamper evidence only, resolved into the environment at deploy: rotating would need a redeploy and void open cursors.',
    });

    this.functionEnvironment = {
      TABLE_NAME: this.mainTable.tableName,
      TTL_TABLE_NAME: this.ttlTable.tableName,
      SECRETS_KMS_KEY_ID: this.secretsKey.keyArn,
      // Cursors only need tamper evidence: which platform's data a list reads comes from the signed request,
      // never from the cursor. So the key may sit in the function's environment, resolved at deploy time.
      LIST_CURSOR_KEY: this.listCursorKey.secretValue.unsafeUnwrap(),
      // A stalled DynamoDB or Step Functions call fails well inside the functions' timeouts (503, Retry-After).
      AWS_CONNECT_TIMEOUT_MS: '1000',
      AWS_REQUEST_TIMEOUT_MS: '2000',
      AWS_MAX_ATTEMPTS: '3',
      // A request waits this long for its booking in a hot account's queue, then answers 503 (the booking
      // still commits once): inside API Gateway's 29 s and the API functions' timeout.
      HOT_ACCOUNT_WAIT_MS: '8000',
      // Every function has active X-Ray tracing (service-function.ts): the edge loads the Powertools Tracer.
      TRACING: 'active',
      QUOTE_TTL_SECONDS: String(settings.quoteTtlSeconds),
      PRICE_MAX_AGE_SECONDS: String(settings.priceMaxAgeSeconds),
      SETTLEMENT_SESSION_SECONDS: String(settings.settlementSessionSeconds),
      SPOT_SETTLEMENT_DEADLINE_SECONDS: String(settings.spotSettlementDeadlineSeconds),
      SETTLEMENT_SWEEP_MAX_TRADES: String(settings.settlementSweepMaxTrades),
      SETTLEMENT_LEG_SECONDS: String(settings.settlementLegSeconds),
      // Deployed: https only, and never a private or loopback address.
      WEBHOOK_ALLOW_PRIVATE_URLS: 'false',
      WEBHOOK_ALLOW_HTTP: 'false',
      WEBHOOK_RETRY_SCHEDULE_SECONDS: settings.webhookRetryScheduleSeconds,
      LOG_LEVEL: settings.logLevel,
      // Counted in the TTL table: every container of every function sees one count per key.
      RATE_LIMIT_RPS: String(settings.rateLimitRps),
      RATE_LIMIT_BURST: String(settings.rateLimitBurst),
      RATE_LIMIT_COUNTER: 'table',
    };

    this.api = this.createApi();
    this.apiFirewall = new ApiFirewallStack(this, 'ApiFirewall', {
      api: this.api,
      stageName: API_STAGE,
      requestsPerKeyPerMinute: settings.wafRequestsPerKeyPerMinute,
    });
    this.addRoutes(props.routes ?? routes);
    this.eventFunctions = this.addEventFunctions();
    const { stateMachine, sweep, sweepDeadLetters } = this.addSettlementWorkflow(
      props.settlementTaskHandlers ?? SETTLEMENT_TASK_HANDLERS,
    );
    this.settlementWorkflow = stateMachine;
    this.sweepFunction = sweep;
    const webhookQueues = this.addWebhooks();

    this.monitoring = new ServiceMonitoring(this, 'Monitoring', {
      api: this.api,
      functions: this.monitoredFunctions,
      tables: [
        { id: 'MainTable', table: this.mainTable, definition: MAIN_TABLE },
        { id: 'TtlTable', table: this.ttlTable, definition: TTL_TABLE },
      ],
      settlementWorkflow: stateMachine,
      alarmEmail: props.alarmEmail ?? (this.node.tryGetContext(ALARM_EMAIL_CONTEXT) as string | undefined),
    });
    this.monitoring.watchDeadLetterQueue({
      id: 'OpenTradeSweep',
      queue: sweepDeadLetters,
      runbook:
        'Each message is a sweep run that failed after retries: open trades may be without a live execution. ' +
        'Read the OpenTradeSweep logs; the next successful run catches up, then purge the queue.',
    });
    for (const [id, { deadLetters }] of this.eventQueues) {
      this.monitoring.watchDeadLetterQueue({
        id: `${id}Queue`,
        queue: deadLetters,
        runbook: EVENT_DEAD_LETTER_RUNBOOK[id as keyof typeof EVENT_HANDLERS],
      });
    }

    this.monitoring.watchDeadLetterQueue({
      id: 'WebhookDeliveries',
      queue: webhookQueues.deliveryDeadLetters,
      runbook:
        'Each message is a delivery the worker crashed on five times (not a receiver failing: those are retried on schedule and kept as failed). ' +
        'Read the WebhookDelivery logs; the delivery item is still in the due index, so the sweep retries it once the cause is fixed. Then purge.',
    });
    this.monitoring.watchDeadLetterQueue({
      id: 'WebhookSweep',
      queue: webhookQueues.sweepDeadLetters,
      runbook:
        'Each message is a webhook sweep run that failed after retries: due retries and missed events wait. Read the WebhookSweep logs; the next good run catches up, then purge.',
    });
    this.monitoring.watchDeadLetterQueue({
      id: 'WebhookDispatch',
      queue: webhookQueues.dispatchFailures,
      runbook:
        'Stream batches the dispatcher gave up on (shard and sequence numbers only). The events are still marked undispatched, so the ' +
        'WebhookSweep dispatches them within minutes; read the WebhookDispatcher logs for the cause, then purge.',
    });

    this.ledgerCheck = new LedgerCheckStack(this, 'LedgerCheck', {
      mainTable: this.mainTable,
      environment: this.functionEnvironment,
      topic: this.monitoring.topic,
    });

    new CfnOutput(this, 'ApiUrl', { value: this.api.url });
    new CfnOutput(this, 'MainTableName', { value: this.mainTable.tableName });
    new CfnOutput(this, 'TtlTableName', { value: this.ttlTable.tableName });
    // The ops CLI encrypts new API secrets with this key (under the operator's credentials, not the API's).
    new CfnOutput(this, 'SecretsKmsKeyId', { value: this.secretsKey.keyId });
    new CfnOutput(this, 'SecretsKmsKeyArn', { value: this.secretsKey.keyArn });
    new CfnOutput(this, 'SettlementStateMachineArn', { value: this.settlementWorkflow.stateMachineArn });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.monitoring.topic.topicArn });
    new CfnOutput(this, 'DashboardName', { value: this.monitoring.dashboard.dashboardName });
  }

  private createApi(): RestApi {
    const accessLogs = new LogGroup(this, 'ApiAccessLogs', { retention: RetentionDays.ONE_MONTH });
    const api = new RestApi(this, 'Api', {
      restApiName: 'trading-settlement',
      description: 'Trading, rewards and settlement API. Requests are authenticated by signature in the Lambdas.',
      endpointTypes: [EndpointType.REGIONAL],
      // Access logging needs the account-level API Gateway CloudWatch role; a fresh account has none.
      // Retained because it is an account-wide setting other APIs may rely on.
      cloudWatchRole: true,
      cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
      deployOptions: {
        stageName: API_STAGE,
        tracingEnabled: true,
        metricsEnabled: true,
        // Execution logs for failures API Gateway itself answers; never request or response bodies.
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: AccessLogFormat.jsonWithStandardFields(),
        // Stage-wide ceiling so one runaway client cannot exhaust the account's Lambda concurrency.
        throttlingRateLimit: 100,
        throttlingBurstLimit: 200,
      },
    });
    // API Gateway creates its execution log group on first use, never expiring; created here first, it keeps a retention.
    const executionLogs = new LogGroup(this, 'ApiExecutionLogs', {
      logGroupName: `API-Gateway-Execution-Logs_${api.restApiId}/${API_STAGE}`,
      retention: RetentionDays.ONE_MONTH,
    });
    api.deploymentStage.node.addDependency(executionLogs);
    // Bodies and query strings are validated by the handlers' zod schemas, which report every problem at once in
    // the service's error shape; API Gateway checks what it can without changing that shape: the path
    // parameters each method declares (no request models, so no body is rejected here).
    this.requestValidator = api.addRequestValidator('RequestValidator', {
      validateRequestBody: true,
      validateRequestParameters: true,
    });
    Validations.of(api).acknowledge(
      {
        id: 'AwsSolutions::AwsSolutions-APIG4',
        reason:
          'Every route but GET /time and the API description (GET /openapi.json, /docs, and their 405 mocks) is authenticated by the HMAC signature, checked in the Lambda.',
      },
      {
        id: 'AwsSolutions::AwsSolutions-COG4',
        reason: 'Clients are platforms signing with API keys, not Cognito users.',
      },
      {
        id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason: "API Gateway's account-level logging role; AWS documents this managed policy for it.",
      },
    );
    return api;
  }

  /**
   * One function and one API Gateway method per route, each granted what its row of the route table implies:
   * the unsigned route nothing; a signed route reads its API key (main table) and decrypts the key's secret;
   * a POST, or a GET marked `writes`, writes the main table; only POSTs keep replay, idempotency and client-id
   * records in the TTL table.
   */
  private addRoutes(table: readonly Route[]): void {
    const ids = new Set<string>();
    for (const route of table) {
      const id = routeId(route);
      if (ids.has(id)) throw new Error(`routes ${route.method} ${route.path}: construct id ${id} is taken`);
      ids.add(id);

      const fn = this.serviceFunction(id, `${route.method} ${route.path}`, {
        handler: route.handler,
        description: `${route.method} ${route.path}`,
        environment: this.functionEnvironment,
      });
      if (route.area !== null) {
        const mutates = route.method !== 'GET';
        grantTable(
          fn.function,
          this.mainTable,
          MAIN_TABLE,
          route.deletes ? 'delete' : mutates || route.writes ? 'write' : 'read',
        );
        // Releasing an idempotency key after a failure deletes it: the TTL table's only delete.
        if (mutates) grantTable(fn.function, this.ttlTable, TTL_TABLE, 'delete');
        // Decrypt only: API secrets are created by the ops CLI, never through the API.
        this.secretsKey.grantDecrypt(fn.function);
      }

      const pathParameters = [...route.path.matchAll(/\{([^}]+)\}/g)].map((match) => `method.request.path.${match[1]}`);
      this.api.root.resourceForPath(route.path).addMethod(route.method, new LambdaIntegration(fn.function), {
        requestValidator: this.requestValidator,
        requestParameters: Object.fromEntries(pathParameters.map((name) => [name, true])),
      });
      if (route.area === null) this.answerOtherMethodsWith405(route);
      this.routeFunctions.set(route, fn);
    }
  }

  /**
   * API Gateway answers a method a resource lacks with 403 "Missing Authentication Token". The unsigned
   * routes (GET /time and the API description) answer any other method with 405, as the local server does,
   * from a mock integration: no function runs. (A body of another type than JSON gets API Gateway's 415.)
   */
  private answerOtherMethodsWith405(route: Route): void {
    const requestId = 'method.response.header.X-Request-Id';
    this.api.root.resourceForPath(route.path).addMethod(
      'ANY',
      new MockIntegration({
        passthroughBehavior: PassthroughBehavior.NEVER,
        requestTemplates: { 'application/json': '{"statusCode": 405}' },
        integrationResponses: [
          {
            statusCode: '405',
            responseParameters: { [requestId]: 'context.requestId' },
            responseTemplates: { 'application/json': JSON.stringify({ error: `method not allowed on ${route.path}` }) },
          },
        ],
      }),
      { methodResponses: [{ statusCode: '405', responseParameters: { [requestId]: true } }] },
    );
  }

  /** One function per event handler; they move balances, so main-table access only. */
  private addEventFunctions(): Map<string, ServiceFunction> {
    const functions = new Map<string, ServiceFunction>();
    for (const [id, handler] of Object.entries(EVENT_HANDLERS)) {
      const fn = this.serviceFunction(id, 'applies bank or custody events', {
        handler,
        description: `events: ${handler}`,
        environment: this.functionEnvironment,
        reservedConcurrentExecutions: RESERVED_CONCURRENCY.eventConsumer,
      });
      grantTable(fn.function, this.mainTable, MAIN_TABLE, 'write');
      functions.set(id, fn);

      // FIFO, grouped by payment or withdrawal: a resource's events are applied in the order sent (a `posted`
      // overtaking its `pending` would be refused as an illegal move and lost). Content-based deduplication
      // drops a repeat sent within 5 minutes; later repeats are no-ops anyway.
      const deadLetters = new Queue(this, `${id}DeadLetters`, {
        fifo: true,
        retentionPeriod: Duration.days(14),
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
      });
      const queue = new Queue(this, `${id}Queue`, {
        fifo: true,
        contentBasedDeduplication: true,
        // AWS's advice for Lambda consumers: at least six times the function's timeout.
        visibilityTimeout: Duration.seconds(6 * API_FUNCTION_TIMEOUT.toSeconds()),
        retentionPeriod: Duration.days(14),
        deadLetterQueue: { queue: deadLetters, maxReceiveCount: EVENT_MAX_RECEIVES },
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
      });
      fn.function.addEventSource(new SqsEventSource(queue, { batchSize: 10, reportBatchItemFailures: true }));
      this.eventQueues.set(id, { queue, deadLetters });
      new CfnOutput(this, `${id}QueueUrl`, { value: queue.queueUrl });
      new CfnOutput(this, `${id}FunctionName`, { value: fn.function.functionName });
    }
    return functions;
  }

  /**
   * The settlement workflow: a Standard state machine whose tasks are four Lambdas, and
   * StartExecution for the routes that store trades.
   */
  private addSettlementWorkflow(handlers: Record<keyof SettlementWorkflowResources, string>) {
    // Named here rather than by CloudFormation: the continue task starts the machine's next execution, and a
    // reference to the machine from its own task function would be a dependency cycle (the machine's
    // definition names the function). The ARN is built from the name instead.
    const stateMachineName = `${this.stackName}-settlement`;
    const stateMachineArn = this.formatArn({
      service: 'states',
      resource: 'stateMachine',
      resourceName: stateMachineName,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    const task = (name: keyof SettlementWorkflowResources) => {
      const startsExecutions = name === 'continue';
      const fn = this.serviceFunction(
        `Settlement${name[0]!.toUpperCase()}${name.slice(1)}Task`,
        `settlement task: ${name}`,
        {
          handler: handlers[name],
          description: `settlement workflow: ${name}`,
          environment: startsExecutions
            ? { ...this.functionEnvironment, STATE_MACHINE_ARN: stateMachineArn }
            : this.functionEnvironment,
          timeout: SETTLEMENT_TASK_TIMEOUT,
          reservedConcurrentExecutions: RESERVED_CONCURRENCY.settlementTask,
        },
      );
      // Tasks move trades and balances; they neither authenticate callers nor keep request windows.
      grantTable(fn.function, this.mainTable, MAIN_TABLE, 'write');
      if (startsExecutions)
        fn.function.addToRolePolicy(
          new PolicyStatement({ actions: ['states:StartExecution'], resources: [stateMachineArn] }),
        );
      return fn;
    };
    const tasks = {
      activate: task('activate'),
      attempt: task('attempt'),
      default: task('default'),
      continue: task('continue'),
    };

    const definition = settlementWorkflowDefinition(
      {
        activate: tasks.activate.function.functionArn,
        attempt: tasks.attempt.function.functionArn,
        default: tasks.default.function.functionArn,
        continue: tasks.continue.function.functionArn,
      },
      { taskTimeoutSeconds: SETTLEMENT_TASK_TIMEOUT.plus(SETTLEMENT_TASK_TIMEOUT_MARGIN).toSeconds() },
    );

    const logs = new LogGroup(this, 'SettlementWorkflowLogs', { retention: RetentionDays.ONE_MONTH });
    const stateMachine = new StateMachine(this, 'SettlementWorkflow', {
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

    // Nothing may strand a trade: a scheduled sweep starts an execution for any open trade
    // that lacks one and redrives failed ones. Tasks are idempotent, so a sweep racing a live run is harmless.
    // Invoked asynchronously by the schedule: a run that fails after Lambda's retries (or that EventBridge
    // cannot deliver) is kept here, and alarmed on, instead of vanishing.
    const sweepDeadLetters = new Queue(this, 'OpenTradeSweepDeadLetters', {
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    const sweep = this.serviceFunction('OpenTradeSweep', 'the scheduled settlement sweep', {
      handler: SETTLEMENT_SWEEP_HANDLER,
      description: 'settlement workflow: revive overdue open trades (no live execution)',
      environment: { ...this.functionEnvironment, STATE_MACHINE_ARN: stateMachine.stateMachineArn },
      timeout: Duration.minutes(5),
      deadLetterQueue: sweepDeadLetters,
      reservedConcurrentExecutions: RESERVED_CONCURRENCY.settlementSweep,
    });
    grantTable(sweep.function, this.mainTable, MAIN_TABLE, 'read');
    // It moves a visited trade's due time on the open-trades index (one conditioned UpdateItem), nothing else.
    Grant.addToPrincipal({
      grantee: sweep.function,
      actions: ['dynamodb:UpdateItem'],
      resourceArns: [this.mainTable.tableArn],
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
      id: `AwsSolutions::AwsSolutions-IAM5[Resource::${JSON.stringify([EXECUTIONS_OF_STATE_MACHINE, { Name: this.resolve(stateMachine.stateMachineName) }])}]`,
      reason:
        'Executions are named by trade id at run time: only a pattern under this one state machine can name them.',
    });
    new Rule(this, 'OpenTradeSweepSchedule', {
      schedule: Schedule.rate(Duration.minutes(5)),
      targets: [new LambdaFunction(sweep.function, { deadLetterQueue: sweepDeadLetters, retryAttempts: 2 })],
    });

    for (const [route, fn] of this.routeFunctions) {
      if (!SETTLEMENT_STARTING_ROUTES.some((r) => r.method === route.method && r.path === route.path)) continue;
      const variable: keyof ServiceEnvironment = 'STATE_MACHINE_ARN';
      fn.function.addEnvironment(variable, stateMachine.stateMachineArn);
      stateMachine.grantStartExecution(fn.function);
    }
    return { stateMachine, sweep, sweepDeadLetters };
  }

  /**
   * Webhooks: the table's stream, filtered to event inserts, feeds a dispatcher that makes
   * one delivery per subscribed endpoint and queues it; a worker on the queue claims, signs and posts each
   * attempt and queues the next within SQS's 15-minute delay; a sweep every minute drains later retries and
   * dispatches what the stream missed. Failed stream batches go to an on-failure queue and poisoned delivery
   * messages to a dead-letter queue, both alarmed.
   */
  private addWebhooks() {
    const queueProps = {
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    };
    const deliveryDeadLetters = new Queue(this, 'WebhookDeliveryDeadLetters', queueProps);
    const dispatchFailures = new Queue(this, 'WebhookDispatchFailures', queueProps);
    const deliveries = new Queue(this, 'WebhookDeliveries', {
      ...queueProps,
      retentionPeriod: Duration.days(4),
      // Lambda's advice: at least six times the function's timeout, so a message is not redelivered while
      // its first worker still runs (the claim would stop a second send anyway).
      visibilityTimeout: Duration.seconds(WEBHOOK_DELIVERY_TIMEOUT.toSeconds() * 6),
      deadLetterQueue: { queue: deliveryDeadLetters, maxReceiveCount: 5 },
    });
    Validations.of(deliveryDeadLetters).acknowledge({
      id: 'AwsSolutions::AwsSolutions-SQS3',
      reason: 'This is the dead-letter queue of WebhookDeliveries.',
    });
    Validations.of(dispatchFailures).acknowledge({
      id: 'AwsSolutions::AwsSolutions-SQS3',
      reason: "The dispatcher event source mapping's on-failure destination: it only ever holds failure records.",
    });
    const environment: ServiceEnvironment = { ...this.functionEnvironment, WEBHOOK_QUEUE_URL: deliveries.queueUrl };

    const dispatcher = this.serviceFunction('WebhookDispatcher', 'fans events out into webhook deliveries', {
      handler: WEBHOOK_HANDLERS.dispatcher,
      description: 'webhooks: stream -> one delivery per subscribed endpoint',
      environment,
      timeout: Duration.seconds(60),
      reservedConcurrentExecutions: RESERVED_CONCURRENCY.webhookDispatcher,
    });
    grantTable(dispatcher.function, this.mainTable, MAIN_TABLE, 'write');
    deliveries.grantSendMessages(dispatcher.function);
    dispatcher.function.addEventSource(
      new DynamoEventSource(this.mainTable, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: 100,
        maxBatchingWindow: Duration.seconds(1),
        bisectBatchOnError: true,
        reportBatchItemFailures: true,
        retryAttempts: 10,
        // The sweep dispatches whatever is given up on, so a poisoned record never blocks the shard for a day.
        maxRecordAge: Duration.hours(6),
        onFailure: new SqsDlq(dispatchFailures),
        filters: [FilterCriteria.filter(DISPATCH_FILTER_PATTERN)],
      }),
    );

    const worker = this.serviceFunction('WebhookDelivery', 'delivers webhooks', {
      handler: WEBHOOK_HANDLERS.delivery,
      description: 'webhooks: one signed attempt per queued delivery',
      environment,
      timeout: WEBHOOK_DELIVERY_TIMEOUT,
      reservedConcurrentExecutions: RESERVED_CONCURRENCY.webhookDelivery,
    });
    grantTable(worker.function, this.mainTable, MAIN_TABLE, 'write');
    deliveries.grantSendMessages(worker.function);
    // Endpoint secrets are encrypted like API secrets; the worker decrypts them to sign.
    this.secretsKey.grantDecrypt(worker.function);
    worker.function.addEventSource(
      new SqsEventSource(deliveries, { batchSize: 10, reportBatchItemFailures: true, maxConcurrency: 50 }),
    );

    // Invoked asynchronously by the schedule: a run that fails after retries is kept and alarmed on.
    const sweepDeadLetters = new Queue(this, 'WebhookSweepDeadLetters', queueProps);
    const sweep = this.serviceFunction('WebhookSweep', 'the scheduled webhook sweep', {
      handler: WEBHOOK_HANDLERS.sweep,
      description: 'webhooks: queue due retries, dispatch events the stream missed',
      environment,
      timeout: Duration.minutes(5),
      deadLetterQueue: sweepDeadLetters,
      reservedConcurrentExecutions: RESERVED_CONCURRENCY.webhookSweep,
    });
    grantTable(sweep.function, this.mainTable, MAIN_TABLE, 'write');
    deliveries.grantSendMessages(sweep.function);
    new Rule(this, 'WebhookSweepSchedule', {
      schedule: Schedule.rate(Duration.minutes(1)),
      targets: [new LambdaFunction(sweep.function, { deadLetterQueue: sweepDeadLetters, retryAttempts: 2 })],
    });

    // Creating an endpoint or rotating its secret encrypts the new secret.
    for (const [route, fn] of this.routeFunctions) {
      // kms:Encrypt alone (grantEncrypt would add ReEncrypt* and GenerateDataKey*, which nothing here calls).
      if (route.encryptsSecrets)
        fn.function.addToRolePolicy(
          new PolicyStatement({ actions: ['kms:Encrypt'], resources: [this.secretsKey.keyArn] }),
        );
    }
    return { deliveries, deliveryDeadLetters, dispatchFailures, sweepDeadLetters, dispatcher, worker, sweep };
  }

  /** A ServiceFunction that the alarms and the dashboard watch. */
  private serviceFunction(
    id: string,
    purpose: string,
    props: ConstructorParameters<typeof ServiceFunction>[2],
  ): ServiceFunction {
    const fn = new ServiceFunction(this, id, props);
    this.monitoredFunctions.push({ id, purpose, fn: fn.function });
    return fn;
  }
}

type TableAccess = 'read' | 'write' | 'delete';

const TABLE_ACTIONS: Record<TableAccess, readonly string[]> = {
  read: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'],
  // ConditionCheckItem: the guards inside TransactWriteItems (each of a transaction's actions is authorised on its own).
  write: [
    'dynamodb:GetItem',
    'dynamodb:BatchGetItem',
    'dynamodb:Query',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:ConditionCheckItem',
  ],
  delete: [
    'dynamodb:GetItem',
    'dynamodb:BatchGetItem',
    'dynamodb:Query',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:ConditionCheckItem',
    'dynamodb:DeleteItem',
  ],
};

/**
 * Grants the item actions one access level needs on a table and its named indexes, and nothing else: no Scan,
 * no DeleteItem below `delete`, no table management, and no `index/*` (CDK's grantReadData grants all three
 * kinds of wildcard). Nothing on a request path scans; a full scan is an ops CLI task under ops credentials.
 */
function grantTable(grantee: IGrantable, table: Table, definition: TableDefinition, access: TableAccess): void {
  Grant.addToPrincipal({
    grantee,
    actions: [...TABLE_ACTIONS[access]],
    resourceArns: [table.tableArn, ...definition.globalIndexes.map((index) => `${table.tableArn}/index/${index.name}`)],
  });
}

/** A table built from its shared definition, so CDK, DynamoDB Local and the tests cannot disagree on keys. */
function tableFrom(scope: Construct, id: string, definition: TableDefinition, extra: Partial<TableProps>): Table {
  const table = new Table(scope, id, {
    partitionKey: { name: definition.partitionKey, type: AttributeType.STRING },
    ...(definition.sortKey && { sortKey: { name: definition.sortKey, type: AttributeType.STRING } }),
    ...(definition.ttlAttribute && { timeToLiveAttribute: definition.ttlAttribute }),
    billingMode: BillingMode.PAY_PER_REQUEST,
    removalPolicy: RemovalPolicy.RETAIN,
    ...extra,
  });
  for (const index of definition.globalIndexes) {
    table.addGlobalSecondaryIndex({
      indexName: index.name,
      partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
      sortKey: { name: index.sortKey, type: AttributeType.STRING },
      projectionType: ProjectionType.ALL,
    });
  }
  return table;
}
