import { CfnOutput, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  AttributeType,
  BillingMode,
  ProjectionType,
  StreamViewType,
  Table,
  type TableProps,
} from 'aws-cdk-lib/aws-dynamodb';
import { Grant } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { Config } from '../lib/config.js';
import { MAIN_TABLE, TTL_TABLE, type TableDefinition } from '../lib/store/table/tables.js';
import { addApi, API_STAGE } from './api.js';
import { ApiFirewallStack } from './api-firewall-stack.js';
import { addEventConsumers, EVENT_DEAD_LETTER_RUNBOOK, type EVENT_HANDLERS } from './event-consumers.js';
import { LedgerCheckStack } from './ledger-check-stack.js';
import { ALARM_EMAIL_CONTEXT, type MonitoredFunction, ServiceMonitoring } from './monitoring.js';
import { routes, type Route } from './routes.js';
import { ServiceFunction, type ServiceEnvironment } from './service-function.js';
import { addSettlementWorkflow, SETTLEMENT_TASK_HANDLERS } from './settlement.js';
import type { SettlementWorkflowResources } from './settlement-workflow.js';
import type { StackBase } from './stack-base.js';
import { addWebhooks } from './webhooks.js';

/**
 * The service's stack: the two tables, the secrets key and the cursor key, and the parts built on them (each
 * in a module of its own): the API (`api.ts`), the bank and custody event consumers (`event-consumers.ts`),
 * the settlement workflow (`settlement.ts`), the webhooks (`webhooks.ts`), the monitoring (`monitoring.ts`),
 * and the nested stacks of the API firewall and the hourly ledger check.
 */
/** Business settings the functions read from the environment; on AWS sessions are hours apart, not seconds. */
export interface ServiceSettings {
  quoteTtlSeconds: number;
  priceMaxAgeSeconds: number;
  settlementSessionSeconds: number;
  spotSettlementDeadlineSeconds: number;
  /** Overdue trades one sweep invocation revives at most (the next one, 5 minutes later, takes the rest). */
  settlementSweepMaxTrades: number;
  /** Records a filtered list's count reads at most when its filters have no counter (then the count is null). */
  listCountBudget: number;
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
  listCountBudget: 10_000,
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
  readonly eventQueues: Map<string, { queue: Queue; deadLetters: Queue }>;
  readonly sweepFunction: ServiceFunction;
  /** The hourly ledger check, in a nested stack of its own. */
  readonly ledgerCheck: LedgerCheckStack;
  readonly monitoring: ServiceMonitoring;
  /** The API stage's WAF web ACL, a rate-based rule per API key, in a nested stack of its own. */
  readonly apiFirewall: ApiFirewallStack;
  /** Every Lambda of the stack by construct id, for alarms and the dashboard. */
  private readonly monitoredFunctions: MonitoredFunction[] = [];

  constructor(scope: Construct, id: string, props: TradingSettlementStackProps = {}) {
    // No CDKMetadata resource: it only reports the CDK's version to AWS, and resources are kept well under
    // CloudFormation's 500 per template (test/infra/stack.test.ts holds 400).
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
        'Cursor tamper evidence only (read by the listing functions, cached 15 minutes): rotating would void every open cursor.',
    });

    const environment: ServiceEnvironment = {
      TABLE_NAME: this.mainTable.tableName,
      TTL_TABLE_NAME: this.ttlTable.tableName,
      SECRETS_KMS_KEY_ID: this.secretsKey.keyArn,
      // A stalled DynamoDB or Step Functions call fails well inside the functions' timeouts (503, Retry-After).
      AWS_CONNECT_TIMEOUT_MS: '1000',
      AWS_REQUEST_TIMEOUT_MS: '2000',
      AWS_MAX_ATTEMPTS: '3',
      // The SDK's default: a function serves one request at a time and opens only a few connections for it.
      AWS_MAX_SOCKETS: '50',
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
      LIST_COUNT_BUDGET: String(settings.listCountBudget),
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

    const base: StackBase = {
      stack: this,
      mainTable: this.mainTable,
      ttlTable: this.ttlTable,
      secretsKey: this.secretsKey,
      environment,
      addFunction: (id, purpose, functionProps) => {
        const fn = new ServiceFunction(this, id, functionProps);
        this.monitoredFunctions.push({ id, purpose, fn: fn.function });
        return fn;
      },
      routeFunctions: this.routeFunctions,
    };
    // In this order: the settlement workflow and the webhooks extend route functions the API made.
    this.api = addApi(base, props.routes ?? routes);
    letListsReadCursorKey(this.routeFunctions, this.listCursorKey);
    this.apiFirewall = new ApiFirewallStack(this, 'ApiFirewall', {
      api: this.api,
      stageName: API_STAGE,
      requestsPerKeyPerMinute: settings.wafRequestsPerKeyPerMinute,
    });
    const consumers = addEventConsumers(base);
    this.eventFunctions = consumers.functions;
    this.eventQueues = consumers.queues;
    const { stateMachine, sweep, sweepDeadLetters } = addSettlementWorkflow(
      base,
      props.settlementTaskHandlers ?? SETTLEMENT_TASK_HANDLERS,
    );
    this.settlementWorkflow = stateMachine;
    this.sweepFunction = sweep;
    const webhookQueues = addWebhooks(base);

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
      environment,
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
}

/**
 * The routes that page by cursor read the cursor key from its secret at run time (`lib/runtime/cursor-key.ts`),
 * GetSecretValue on that secret alone. Not resolved into every function's environment: there it would be
 * plaintext in the function's configuration, and each function's copy a dynamic reference of the template's 60.
 */
function letListsReadCursorKey(routeFunctions: Map<Route, ServiceFunction>, secret: Secret): void {
  for (const [route, fn] of routeFunctions) {
    if (!route.lists) continue;
    const variable: keyof ServiceEnvironment = 'LIST_CURSOR_SECRET_ARN';
    fn.function.addEnvironment(variable, secret.secretArn);
    Grant.addToPrincipal({
      grantee: fn.function,
      actions: ['secretsmanager:GetSecretValue'],
      resourceArns: [secret.secretArn],
    });
  }
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
