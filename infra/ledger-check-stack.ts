import { Duration, NestedStack } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, MathExpression, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Grant } from 'aws-cdk-lib/aws-iam';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { METRIC, METRICS_NAMESPACE, SERVICE_NAME } from '../lib/observability/metric-names.js';
import { MAIN_TABLE } from '../lib/store/table/tables.js';
import { ServiceFunction, type ServiceEnvironment } from './service-function.js';

/** The scheduled ledger check. */
export const LEDGER_CHECK_HANDLER = 'functions/reconciliation/check-ledger.ts';

export interface LedgerCheckStackProps {
  mainTable: Table;
  environment: ServiceEnvironment;
  /** The ops topic every alarm of the service notifies. */
  topic: ITopic;
}

const PERIOD = Duration.hours(1);

/**
 * The hourly ledger check: its function, schedule, dead-letter queue and alarms. A nested stack, so the
 * service's stack keeps its headroom under CloudFormation's 500 resources (test/infra/stack.test.ts); this
 * adds one resource there. Its alarms notify the service's topic, whose policy lets this account's alarms publish. It reads only:
 * Scan and DescribeTable on the main table, GetItem and Query (table and indexes) for its rechecks.
 */
export class LedgerCheckStack extends NestedStack {
  readonly check: ServiceFunction;
  readonly schedule: Rule;
  readonly deadLetters: Queue;
  readonly alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: LedgerCheckStackProps) {
    super(scope, id, { description: 'Hourly ledger check' });
    this.deadLetters = new Queue(this, 'LedgerCheckDeadLetters', {
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    this.check = new ServiceFunction(this, 'LedgerCheck', {
      handler: LEDGER_CHECK_HANDLER,
      description: 'reconciliation: every balance, movement, balance event and list counter of the main table',
      environment: props.environment,
      timeout: Duration.minutes(15),
      deadLetterQueue: this.deadLetters,
    });
    const table = props.mainTable.tableArn;
    Grant.addToPrincipal({
      grantee: this.check.function,
      actions: ['dynamodb:Scan', 'dynamodb:DescribeTable', 'dynamodb:GetItem', 'dynamodb:Query'],
      resourceArns: [table, ...MAIN_TABLE.globalIndexes.map((index) => `${table}/index/${index.name}`)],
    });
    this.schedule = new Rule(this, 'LedgerCheckSchedule', {
      schedule: Schedule.rate(Duration.hours(1)),
      targets: [new LambdaFunction(this.check.function, { deadLetterQueue: this.deadLetters, retryAttempts: 2 })],
    });

    const serviceMetric = (metricName: string) =>
      new Metric({
        namespace: METRICS_NAMESPACE,
        metricName,
        dimensionsMap: { service: SERVICE_NAME },
        period: PERIOD,
        statistic: 'Maximum',
      });
    this.alarm('LedgerDiscrepancies', props.topic, {
      metric: serviceMetric(METRIC.ledgerDiscrepancies),
      description:
        "The hourly ledger check found a balance, movement, balance event or list counter that breaks the ledger's invariants: " +
        'money may be misbooked. The LedgerCheck log group has one "ledger discrepancy" error line per finding, with the account, movement or ' +
        'counter id, expected and found; confirm with `npm run -s admin -- ledger check --platform CODE` against the deployed tables.',
    });
    this.alarm('LedgerCheckNotDone', props.topic, {
      // Either way the ledger went unchecked this hour: the scan outgrew the invocation, or the function failed.
      metric: new MathExpression({
        expression: 'FILL(incomplete, 0) + FILL(errors, 0) + FILL(dead, 0)',
        usingMetrics: {
          incomplete: serviceMetric(METRIC.ledgerCheckIncomplete),
          errors: this.check.function.metricErrors({ period: PERIOD, statistic: 'Sum' }),
          dead: this.deadLetters.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum' }),
        },
        period: PERIOD,
        label: 'ledger check not done',
      }),
      description:
        'The hourly ledger check did not finish: it failed (LedgerCheck logs; failed runs wait in its dead-letter queue, purge them once read) or ' +
        'its scan outgrew the 15-minute invocation ("ledger check stopped before the end of its scan"). Run `npm run -s admin -- ledger check --resume FILE` ' +
        'from an ops host (resumable), and move the scheduled check to a longer-running task if the table has outgrown it.',
    });
  }

  private alarm(id: string, topic: ITopic, options: { metric: Metric | MathExpression; description: string }): void {
    const alarm = new Alarm(this, id, {
      metric: options.metric,
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription: options.description,
    });
    alarm.addAlarmAction(new SnsAction(topic));
    alarm.addOkAction(new SnsAction(topic));
    this.alarms.push(alarm);
  }
}
