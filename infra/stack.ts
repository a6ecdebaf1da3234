import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  EndpointType,
  LambdaIntegration,
  LogGroupLogDestination,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import { AttributeType, BillingMode, ProjectionType, StreamViewType, Table, type TableProps } from 'aws-cdk-lib/aws-dynamodb';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { Construct } from 'constructs';
import type { Config } from '../lib/config.js';
import { MAIN_TABLE, TTL_TABLE, type TableDefinition } from '../lib/store/tables.js';
import { routeId, routes, type Route } from './routes.js';
import { ServiceFunction, type ServiceEnvironment } from './service-function.js';
import { settlementWorkflowDefinition, type SettlementWorkflowResources } from './settlement-workflow.js';

/** Business settings the functions read from the environment; on AWS sessions are hours apart, not seconds. */
export interface ServiceSettings {
  quoteTtlSeconds: number;
  priceMaxAgeSeconds: number;
  settlementSessionSeconds: number;
  spotSettlementDeadlineSeconds: number;
  logLevel: Config['LOG_LEVEL'];
}

export const DEFAULT_SETTINGS: ServiceSettings = {
  quoteTtlSeconds: 30,
  priceMaxAgeSeconds: 300,
  settlementSessionSeconds: 3600,
  spotSettlementDeadlineSeconds: 172800,
  logLevel: 'info',
};

export interface TradingSettlementStackProps extends StackProps {
  settings?: Partial<ServiceSettings>;
  /** The route table; only tests pass another one (nested paths and routes not written yet). */
  routes?: readonly Route[];
  /** Where the workflow's task handlers live; only tests pass others, to synthesize the workflow early. */
  settlementTaskHandlers?: Record<keyof SettlementWorkflowResources, string>;
}

/** The workflow's task handlers, by the resource name `settlementWorkflowDefinition` expects. */
export const SETTLEMENT_TASK_HANDLERS: Record<keyof SettlementWorkflowResources, string> = {
  activate: 'functions/settlement/activate-trade.ts',
  attempt: 'functions/settlement/attempt-settlement.ts',
  default: 'functions/settlement/default-trade.ts',
};

/**
 * Functions that outside systems call with events rather than HTTP requests: the bank's payment status
 * changes and the custodian's withdrawal confirmations. Each applies a state change conditioned on the
 * current state, so redelivered events are harmless.
 */
export const EVENT_HANDLERS = {
  BankEvents: 'functions/payments/apply-bank-event.ts',
  CustodyEvents: 'functions/withdrawals/apply-custody-event.ts',
} as const;

/** The scheduled function that revives open trades without a live execution. */
export const SETTLEMENT_SWEEP_HANDLER = 'functions/settlement/sweep-open-trades.ts';

/** Routes whose handler starts a settlement execution (design section 7). */
export const SETTLEMENT_STARTING_ROUTES: readonly Pick<Route, 'method' | 'path'>[] = [{ method: 'POST', path: '/trades' }];

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

  // Not `environment`: Stack already uses that name for its account/region.
  private readonly functionEnvironment: ServiceEnvironment;

  constructor(scope: Construct, id: string, props: TradingSettlementStackProps = {}) {
    super(scope, id, props);
    const settings = { ...DEFAULT_SETTINGS, ...props.settings };

    this.mainTable = tableFrom(this, 'MainTable', MAIN_TABLE, {
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // The ledger lives here: nobody should be able to drop it by accident, in CloudFormation or the console.
      deletionProtection: true,
      // Lets a consumer pick up trades stored without a started execution (design section 7).
      stream: StreamViewType.NEW_AND_OLD_IMAGES,
    });
    // Only windows of 72 hours at most live here: PITR's 35 days of history would be cost without use.
    this.ttlTable = tableFrom(this, 'TtlTable', TTL_TABLE, {});

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

    this.functionEnvironment = {
      TABLE_NAME: this.mainTable.tableName,
      TTL_TABLE_NAME: this.ttlTable.tableName,
      SECRETS_KMS_KEY_ID: this.secretsKey.keyArn,
      // Cursors only need tamper evidence: which platform's data a list reads comes from the signed request,
      // never from the cursor. So the key may sit in the function's environment, resolved at deploy time.
      LIST_CURSOR_KEY: this.listCursorKey.secretValue.unsafeUnwrap(),
      QUOTE_TTL_SECONDS: String(settings.quoteTtlSeconds),
      PRICE_MAX_AGE_SECONDS: String(settings.priceMaxAgeSeconds),
      SETTLEMENT_SESSION_SECONDS: String(settings.settlementSessionSeconds),
      SPOT_SETTLEMENT_DEADLINE_SECONDS: String(settings.spotSettlementDeadlineSeconds),
      LOG_LEVEL: settings.logLevel,
    };

    this.api = this.createApi();
    this.addRoutes(props.routes ?? routes);
    this.eventFunctions = this.addEventFunctions();
    this.settlementWorkflow = this.addSettlementWorkflow(props.settlementTaskHandlers ?? SETTLEMENT_TASK_HANDLERS);

    new CfnOutput(this, 'ApiUrl', { value: this.api.url });
    new CfnOutput(this, 'MainTableName', { value: this.mainTable.tableName });
    new CfnOutput(this, 'TtlTableName', { value: this.ttlTable.tableName });
    // The ops CLI encrypts new API secrets with this key (under the operator's credentials, not the API's).
    new CfnOutput(this, 'SecretsKmsKeyId', { value: this.secretsKey.keyId });
    new CfnOutput(this, 'SecretsKmsKeyArn', { value: this.secretsKey.keyArn });
    new CfnOutput(this, 'SettlementStateMachineArn', { value: this.settlementWorkflow.stateMachineArn });
  }

  private createApi(): RestApi {
    const accessLogs = new LogGroup(this, 'ApiAccessLogs', { retention: RetentionDays.ONE_MONTH });
    return new RestApi(this, 'Api', {
      restApiName: 'trading-settlement',
      description: 'Trading, rewards and settlement API. Requests are authenticated by signature in the Lambdas.',
      endpointTypes: [EndpointType.REGIONAL],
      // Access logging needs the account-level API Gateway CloudWatch role; a fresh account has none.
      // Retained because it is an account-wide setting other APIs may rely on.
      cloudWatchRole: true,
      cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
      deployOptions: {
        stageName: 'v1',
        tracingEnabled: true,
        metricsEnabled: true,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: AccessLogFormat.jsonWithStandardFields(),
        // Stage-wide ceiling so one runaway client cannot exhaust the account's Lambda concurrency.
        throttlingRateLimit: 100,
        throttlingBurstLimit: 200,
      },
    });
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

      const fn = new ServiceFunction(this, id, {
        handler: route.handler,
        description: `${route.method} ${route.path}`,
        environment: this.functionEnvironment,
      });
      if (route.area !== null) {
        if (route.method === 'POST' || route.writes) this.mainTable.grantReadWriteData(fn.function);
        else this.mainTable.grantReadData(fn.function);
        if (route.method === 'POST') this.ttlTable.grantReadWriteData(fn.function);
        // Decrypt only: API secrets are created by the ops CLI, never through the API.
        this.secretsKey.grantDecrypt(fn.function);
      }

      this.api.root.resourceForPath(route.path).addMethod(route.method, new LambdaIntegration(fn.function));
      this.routeFunctions.set(route, fn);
    }
  }

  /** One function per event handler; they move balances, so main-table access only. */
  private addEventFunctions(): Map<string, ServiceFunction> {
    const functions = new Map<string, ServiceFunction>();
    for (const [id, handler] of Object.entries(EVENT_HANDLERS)) {
      const fn = new ServiceFunction(this, id, { handler, description: `events: ${handler}`, environment: this.functionEnvironment });
      this.mainTable.grantReadWriteData(fn.function);
      functions.set(id, fn);
      new CfnOutput(this, `${id}FunctionName`, { value: fn.function.functionName });
    }
    return functions;
  }

  /**
   * The settlement workflow (design section 7): a Standard state machine whose tasks are three Lambdas, and
   * StartExecution for the routes that store trades.
   */
  private addSettlementWorkflow(handlers: Record<keyof SettlementWorkflowResources, string>): StateMachine {
    const task = (name: keyof SettlementWorkflowResources) => {
      const fn = new ServiceFunction(this, `Settlement${name[0]!.toUpperCase()}${name.slice(1)}Task`, {
        handler: handlers[name],
        description: `settlement workflow: ${name}`,
        environment: this.functionEnvironment,
        timeout: SETTLEMENT_TASK_TIMEOUT,
      });
      // Tasks move trades and balances; they neither authenticate callers nor keep request windows.
      this.mainTable.grantReadWriteData(fn.function);
      return fn;
    };
    const tasks = { activate: task('activate'), attempt: task('attempt'), default: task('default') };

    const definition = settlementWorkflowDefinition(
      {
        activate: tasks.activate.function.functionArn,
        attempt: tasks.attempt.function.functionArn,
        default: tasks.default.function.functionArn,
      },
      { taskTimeoutSeconds: SETTLEMENT_TASK_TIMEOUT.plus(SETTLEMENT_TASK_TIMEOUT_MARGIN).toSeconds() },
    );

    const logs = new LogGroup(this, 'SettlementWorkflowLogs', { retention: RetentionDays.ONE_MONTH });
    const stateMachine = new StateMachine(this, 'SettlementWorkflow', {
      stateMachineType: StateMachineType.STANDARD,
      definitionBody: DefinitionBody.fromString(JSON.stringify(definition)),
      tracingEnabled: true,
      logs: { destination: logs, level: LogLevel.ALL, includeExecutionData: true },
    });
    // A string definition hides its task resources from CDK, so invoke rights are granted by hand.
    for (const task of Object.values(tasks)) task.function.grantInvoke(stateMachine);

    // Nothing may strand a trade (design section 7): a scheduled sweep starts an execution for any open trade
    // that lacks one and redrives failed ones. Tasks are idempotent, so a sweep racing a live run is harmless.
    const sweep = new ServiceFunction(this, 'OpenTradeSweep', {
      handler: SETTLEMENT_SWEEP_HANDLER,
      description: 'settlement workflow: revive open trades without a live execution',
      environment: { ...this.functionEnvironment, STATE_MACHINE_ARN: stateMachine.stateMachineArn },
      timeout: Duration.minutes(5),
    });
    this.mainTable.grantReadData(sweep.function);
    stateMachine.grantStartExecution(sweep.function);
    // Not grantRead: that adds execution histories, listings and activities the sweep never asks for.
    stateMachine.grantExecution(sweep.function, 'states:DescribeExecution', 'states:RedriveExecution');
    new Rule(this, 'OpenTradeSweepSchedule', {
      schedule: Schedule.rate(Duration.minutes(5)),
      targets: [new LambdaFunction(sweep.function)],
    });

    for (const [route, fn] of this.routeFunctions) {
      if (!SETTLEMENT_STARTING_ROUTES.some((r) => r.method === route.method && r.path === route.path)) continue;
      const variable: keyof ServiceEnvironment = 'STATE_MACHINE_ARN';
      fn.function.addEnvironment(variable, stateMachine.stateMachineArn);
      stateMachine.grantStartExecution(fn.function);
    }
    return stateMachine;
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
