import { Duration, NestedStack, Stack } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  Metric,
  SingleValueWidget,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { PAYMENT_STATUSES } from '../lib/domain/payments.js';
import { METRIC, METRICS_NAMESPACE, SERVICE_NAME } from '../lib/observability/metric-names.js';
import type { TableDefinition } from '../lib/store/table/tables.js';

/** The context value (`cdk deploy -c alarmEmail=ops@example.com`) that subscribes an address to the alarm topic. */
export const ALARM_EMAIL_CONTEXT = 'alarmEmail';

const PERIOD = Duration.minutes(5);
/** CloudWatch evaluates at most 10 metrics in one alarm's math expression. */
const METRICS_PER_ALARM = 10;

export interface MonitoredFunction {
  /** Construct id, used in alarm names and graph labels. */
  id: string;
  /** What it does, for the alarm description. */
  purpose: string;
  fn: IFunction;
}

export interface MonitoredQueue {
  id: string;
  queue: IQueue;
  /** What lands here and what to do with it, for the alarm description. */
  runbook: string;
}

export interface MonitoredTable {
  id: string;
  table: Table;
  definition: TableDefinition;
}

export interface ServiceMonitoringProps {
  api: RestApi;
  functions: readonly MonitoredFunction[];
  tables: readonly MonitoredTable[];
  settlementWorkflow: StateMachine;
  /** E-mail subscribed to the alarm topic; none subscribes nobody (subscribe later in the console). */
  alarmEmail?: string;
}

/**
 * Everything an on-call engineer looks at: one SNS topic every alarm notifies (alarm and
 * recovery), the alarms, each saying in its description what it means and what to do, and one dashboard.
 * Dead-letter queues are added with `watchDeadLetterQueue`, so a queue added later (webhooks) is watched the
 * same way.
 *
 * The topic stays in the service's stack (the ledger check's alarms notify it too); the alarms and the
 * dashboard are in a nested stack of their own, `alarmStack`: an alarm per function would otherwise hold a
 * seventh of the service stack's 500 resources, and grow with every route.
 */
export class ServiceMonitoring extends Construct {
  readonly topic: Topic;
  /** The nested stack the alarms and the dashboard are in. */
  readonly alarmStack: NestedStack;
  readonly dashboard: Dashboard;
  readonly alarms: Alarm[] = [];
  private readonly deadLetterGraph: GraphWidget;

  constructor(scope: Construct, id: string, props: ServiceMonitoringProps) {
    super(scope, id);
    this.alarmStack = new NestedStack(this, 'Alarms', { description: 'Alarms and dashboard of the service' });
    this.topic = new Topic(this, 'AlarmTopic', {
      displayName: 'Trading settlement service alarms',
      enforceSSL: true,
    });
    // enforceSSL gives the topic a policy of its own, which replaces SNS's default one (the account may
    // publish): without this statement CloudWatch is refused every alarm's notification, silently. Only this
    // account's alarms (the ledger check's nested stack included) may publish.
    this.topic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'CloudWatchAlarmsPublish',
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
    );
    if (props.alarmEmail) this.topic.addSubscription(new EmailSubscription(props.alarmEmail));

    this.alarmOnApi(props.api);
    for (const monitored of props.functions) this.alarmOnFunctionErrors(monitored);
    this.alarmOnThrottles(props.functions);
    this.alarmOnSettlement(props.settlementWorkflow);
    for (const table of props.tables) this.alarmOnTableThrottling(table);
    this.alarm('NegativeClearingBalance', {
      metric: serviceMetric(METRIC.negativeClearingBalances, 'Sum'),
      threshold: 1,
      description:
        "A platform's ACH clearing account went below zero (a bank reversal or failure after we credited the purchase). " +
        "We are carrying the platform's debt: find the platform (platform_code) in the bank event function's warning " +
        '"ACH clearing account below zero after a bank event", ' +
        'ask it to prefund the clearing account (ops CLI `deposit --account-label ach_clearing`), and hold its ACH purchases until it does.',
    });

    this.deadLetterGraph = new GraphWidget({ title: 'Dead letters (messages waiting)', width: 8, left: [] });
    this.dashboard = this.buildDashboard(props);
  }

  /** Alarms when anything waits in a dead-letter queue: each message is an event or invocation that was given up on. */
  watchDeadLetterQueue({ id, queue, runbook }: MonitoredQueue): void {
    const metric = queue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum', label: id });
    this.alarm(`${id}DeadLetters`, {
      metric,
      threshold: 1,
      description: `Messages are waiting in the dead-letter queue ${id}. ${runbook}`,
    });
    this.deadLetterGraph.addLeftMetric(metric);
  }

  private alarmOnApi(api: RestApi): void {
    // API Gateway's 5XXError averages to the share of requests answered 5xx (each request counts 0 or 1).
    this.alarm('Api5xxRate', {
      metric: api.metricServerError({ period: PERIOD, statistic: 'Average' }),
      threshold: 0.01,
      description:
        'More than 1% of API requests were answered 5xx in 5 minutes. A 500 is a bug or an outage, never a client mistake: ' +
        "open the dashboard to see which route, then the route function's log group (one JSON line per request; filter on status >= 500) " +
        'and its X-Ray traces. A 503 with Retry-After means DynamoDB throttled or transactions kept conflicting (see the DynamoDB alarms).',
    });
  }

  private alarmOnFunctionErrors({ id, purpose, fn }: MonitoredFunction): void {
    this.alarm(`${id}Errors`, {
      metric: fn.metricErrors({ period: PERIOD, statistic: 'Sum' }),
      threshold: 1,
      description:
        `The function ${id} (${purpose}) failed an invocation (crash, timeout or unhandled error). ` +
        'Its log group has the error line with the request id; API routes answer such failures 502. ' +
        'Retried work (events, settlement tasks) is safe to retry: every state change is conditioned on the current state.',
    });
  }

  private alarmOnThrottles(functions: readonly MonitoredFunction[]): void {
    for (let start = 0; start < functions.length; start += METRICS_PER_ALARM) {
      const group = functions.slice(start, start + METRICS_PER_ALARM);
      const usingMetrics = Object.fromEntries(
        group.map(({ fn }, i) => [`t${i}`, fn.metricThrottles({ period: PERIOD, statistic: 'Sum' })]),
      );
      this.alarm(`LambdaThrottles${start / METRICS_PER_ALARM + 1}`, {
        metric: new MathExpression({
          expression: Object.keys(usingMetrics).join(' + '),
          usingMetrics,
          period: PERIOD,
          label: 'throttles',
        }),
        threshold: 1,
        description:
          `Lambda throttled invocations of ${group.map(({ id }) => id).join(', ')}: the account's concurrency is exhausted. ` +
          'API callers got 429/502 and queued events wait. Check the dashboard for the function and its request rate; ' +
          'raise the account concurrency quota or lower the API stage throttling limits.',
      });
    }
  }

  private alarmOnSettlement(workflow: StateMachine): void {
    const runbook =
      'The open-trade sweep redrives failed executions every 5 minutes; if this repeats, open the execution ' +
      '(Step Functions console, execution named by the trade id; or `npm run admin -- trade history --trade-id ID` with STATE_MACHINE_ARN set) ' +
      "and the failing task function's logs.";
    this.alarm('SettlementExecutionsFailed', {
      metric: workflow.metricFailed({ period: PERIOD, statistic: 'Sum' }),
      threshold: 1,
      description: `A settlement execution failed: its trade is neither settled nor defaulted. ${runbook}`,
    });
    this.alarm('SettlementExecutionsTimedOut', {
      metric: workflow.metricTimedOut({ period: PERIOD, statistic: 'Sum' }),
      threshold: 1,
      description: `A settlement execution timed out: its trade is neither settled nor defaulted. ${runbook}`,
    });
    this.alarm('TradesPastDeadline', {
      // The sweep emits this every run; two runs in a row rules out a trade defaulting at this very moment.
      metric: serviceMetric(METRIC.tradesPastDeadline, 'Maximum'),
      threshold: 1,
      evaluationPeriods: 2,
      description:
        'Open trades are past their settlement deadline by more than a session: they should have defaulted. ' +
        'The sweep logs their ids ("trades past their deadline"); check their executions (failed, or missing) and the settlement alarms.',
    });
  }

  private alarmOnTableThrottling({ id, table, definition }: MonitoredTable): void {
    const usingMetrics: Record<string, IMetric> = {};
    const indexes = [undefined, ...definition.globalIndexes.map((index) => index.name)];
    indexes.forEach((index, i) => {
      for (const [kind, metricName] of [
        ['r', 'ReadThrottleEvents'],
        ['w', 'WriteThrottleEvents'],
      ] as const) {
        usingMetrics[`${kind}${i}`] = new Metric({
          namespace: 'AWS/DynamoDB',
          metricName,
          dimensionsMap: { TableName: table.tableName, ...(index && { GlobalSecondaryIndexName: index }) },
          period: PERIOD,
          statistic: 'Sum',
        });
      }
    });
    this.alarm(`${id}Throttling`, {
      metric: new MathExpression({
        expression: Object.keys(usingMetrics).join(' + '),
        usingMetrics,
        period: PERIOD,
        label: 'throttle events',
      }),
      threshold: 1,
      description:
        `DynamoDB throttled requests on ${id} (table or an index). Requests were retried, then answered 503 with Retry-After. ` +
        'On-demand tables throttle on a hot partition or a sudden doubling of traffic: check the dashboard for which operation ' +
        'and the contributor insights of the table; a single hot platform partition needs sharding.',
    });
  }

  private alarm(
    id: string,
    options: { metric: IMetric; threshold: number; description: string; evaluationPeriods?: number },
  ): Alarm {
    const alarm = new Alarm(this.alarmStack, id, {
      metric: options.metric,
      threshold: options.threshold,
      evaluationPeriods: options.evaluationPeriods ?? 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      // No data means nothing happened (no requests, no failures), not that something is wrong.
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription: options.description,
    });
    alarm.addAlarmAction(new SnsAction(this.topic));
    alarm.addOkAction(new SnsAction(this.topic));
    this.alarms.push(alarm);
    return alarm;
  }

  /**
   * One dashboard, a row per question on-call asks: is the API answering, are the functions failing, is the
   * business moving, is anything piling up. Dead letters join the last row as queues are watched.
   */
  private buildDashboard(props: ServiceMonitoringProps): Dashboard {
    const dashboard = new Dashboard(this.alarmStack, 'Dashboard');
    dashboard.addWidgets(dashboardHeader());
    dashboard.addWidgets(...apiRow(props.api));
    dashboard.addWidgets(...lambdaRow(props.functions));
    dashboard.addWidgets(...businessRow(props.settlementWorkflow));
    dashboard.addWidgets(...backlogRow(props.tables), this.deadLetterGraph);
    return dashboard;
  }
}

/** Where to look beyond the dashboard: the topic, the logs, the traces and the executions. */
function dashboardHeader(): TextWidget {
  return new TextWidget({
    markdown:
      '# Trading, rewards and settlement\nAlarms notify the SNS topic of this stack. Logs: one log group per function ' +
      '(one JSON line per request). Traces: X-Ray. Settlement: Step Functions, executions named by trade id.',
    width: 24,
    height: 2,
  });
}

/** The API: requests by status class as the handlers count them, API Gateway's errors, and latency. */
function apiRow(api: RestApi): GraphWidget[] {
  const apiMetric = (metricName: string, statistic: string, label: string) =>
    new Metric({
      namespace: 'AWS/ApiGateway',
      metricName,
      dimensionsMap: { ApiName: api.restApiName },
      period: PERIOD,
      statistic,
      label,
    });
  const requestsByClass = ['2xx', '4xx', '5xx'].map((statusClass) =>
    serviceMetric(METRIC.requests, 'Sum', { status_class: statusClass }, statusClass),
  );
  return [
    new GraphWidget({ title: 'API requests by status class', width: 8, left: requestsByClass, stacked: true }),
    new GraphWidget({
      title: 'API errors (API Gateway)',
      width: 8,
      left: [apiMetric('4XXError', 'Sum', '4xx'), apiMetric('5XXError', 'Sum', '5xx')],
      right: [apiMetric('Count', 'Sum', 'requests')],
    }),
    new GraphWidget({
      title: 'API latency (ms)',
      width: 8,
      left: [
        apiMetric('Latency', 'p50', 'p50'),
        apiMetric('Latency', 'p99', 'p99'),
        serviceMetric(METRIC.latency, 'p99', {}, 'handler p99'),
      ],
    }),
  ];
}

/** Errors and throttles of every function, one line each, labelled by construct id. */
function lambdaRow(functions: readonly MonitoredFunction[]): GraphWidget[] {
  return [
    new GraphWidget({
      title: 'Lambda errors',
      width: 12,
      left: functions.map(({ id, fn }) => fn.metricErrors({ period: PERIOD, statistic: 'Sum', label: id })),
    }),
    new GraphWidget({
      title: 'Lambda throttles',
      width: 12,
      left: functions.map(({ id, fn }) => fn.metricThrottles({ period: PERIOD, statistic: 'Sum', label: id })),
    }),
  ];
}

/** The business: trades through their states, payments by status, and the settlement executions. */
function businessRow(settlementWorkflow: StateMachine): GraphWidget[] {
  return [
    new GraphWidget({
      title: 'Trades',
      width: 8,
      left: [
        serviceMetric(METRIC.tradesAccepted, 'Sum', {}, 'accepted'),
        serviceMetric(METRIC.tradesSettled, 'Sum', {}, 'settled'),
        serviceMetric(METRIC.tradesDefaulted, 'Sum', {}, 'defaulted'),
      ],
      right: [serviceMetric(METRIC.tradesPastDeadline, 'Maximum', {}, 'past deadline (sweep)')],
    }),
    new GraphWidget({
      title: 'Payments by status',
      width: 8,
      left: PAYMENT_STATUSES.map((status) => serviceMetric(METRIC.paymentStatusChanged, 'Sum', { status }, status)),
    }),
    new GraphWidget({
      title: 'Settlement executions',
      width: 8,
      left: [
        settlementWorkflow.metricStarted({ period: PERIOD, label: 'started' }),
        settlementWorkflow.metricSucceeded({ period: PERIOD, label: 'succeeded' }),
        settlementWorkflow.metricFailed({ period: PERIOD, label: 'failed' }),
        settlementWorkflow.metricTimedOut({ period: PERIOD, label: 'timed out' }),
      ],
    }),
  ];
}

/** What should stay at zero or flat, and the tables' load; the dead-letter graph follows in the same row. */
function backlogRow(tables: readonly MonitoredTable[]): (SingleValueWidget | GraphWidget)[] {
  return [
    new SingleValueWidget({
      title: 'Negative clearing balances / failed webhook deliveries / ledger check',
      width: 8,
      metrics: [
        serviceMetric(METRIC.negativeClearingBalances, 'Sum', {}, 'negative clearing balances'),
        serviceMetric(METRIC.webhookDeliveriesFailed, 'Sum', {}, 'webhook deliveries failed'),
        // The hourly ledger check (its alarms are in its nested stack, infra/ledger-check-stack.ts).
        serviceMetric(METRIC.ledgerDiscrepancies, 'Maximum', {}, 'ledger discrepancies'),
        serviceMetric(METRIC.ledgerCheckIncomplete, 'Maximum', {}, 'ledger check incomplete'),
      ],
    }),
    new GraphWidget({
      title: 'DynamoDB consumed capacity',
      width: 8,
      left: tables.flatMap(({ id, table }) => [
        table.metricConsumedReadCapacityUnits({ period: PERIOD, label: `${id} read` }),
        table.metricConsumedWriteCapacityUnits({ period: PERIOD, label: `${id} write` }),
      ]),
    }),
  ];
}

/** A metric the functions emit (embedded metric format), with the `service` dimension and any others. */
function serviceMetric(
  metricName: string,
  statistic: string,
  dimensions: Record<string, string> = {},
  label?: string,
): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName,
    dimensionsMap: { service: SERVICE_NAME, ...dimensions },
    period: PERIOD,
    statistic,
    label,
  });
}
