import { describe, expect, it } from 'vitest';
import { routes } from '../../infra/routes.js';
import { EVENT_HANDLERS } from '../../infra/event-consumers.js';
import { MAIN_TABLE } from '../../lib/store/table/tables.js';
import { METRIC, METRICS_NAMESPACE, SERVICE_NAME } from '../../lib/observability/metric-names.js';
import {
  actionsOf,
  arnOf,
  type Json,
  nestedResources,
  ofType,
  resourcesOf,
  statementsOf,
  synth,
} from '../support/template.js';

/** The only actions AWS grants on nothing narrower than `*`: X-Ray, and the log delivery Step Functions logging uses. */
const WILDCARD_ONLY_ACTIONS = new Set([
  'xray:PutTraceSegments',
  'xray:PutTelemetryRecords',
  'xray:GetSamplingRules',
  'xray:GetSamplingTargets',
  'logs:CreateLogDelivery',
  'logs:GetLogDelivery',
  'logs:UpdateLogDelivery',
  'logs:DeleteLogDelivery',
  'logs:ListLogDeliveries',
  'logs:PutResourcePolicy',
  'logs:DescribeResourcePolicies',
  'logs:DescribeLogGroups',
  // Reading a table's stream (the webhook dispatcher): ListStreams has no resource-level permissions.
  'dynamodb:ListStreams',
]);

const WRITE_ACTIONS = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:ConditionCheckItem',
];

describe('the stack, as operations see it', () => {
  // With the AWS Solutions checks, as `npm run synth`: an unacknowledged finding throws here with the report.
  const { stack, resources, idOf } = synth({}, { context: { alarmEmail: 'oncall@example.com' }, bestPractices: true });
  const topicId = idOf(stack.monitoring.topic);
  // The alarms and the dashboard are in a nested stack of their own, which takes the parent's resources as parameters.
  const monitoring = nestedResources(stack, resources, stack.monitoring.alarmStack);
  expect(ofType(resources, 'AWS::CloudWatch::Alarm')).toEqual([]);
  const alarms = ofType(monitoring, 'AWS::CloudWatch::Alarm').map(([, alarm]) => alarm.Properties);
  const functions = ofType(resources, 'AWS::Lambda::Function');
  const alarmOn = (metricName: string) =>
    alarms.filter(
      (alarm) =>
        alarm.MetricName === metricName || JSON.stringify(alarm.Metrics ?? []).includes(`"MetricName":"${metricName}"`),
    );

  it('passes the AWS Solutions checks, every exception acknowledged with a reason', () => {
    // Synthesis above passed the checks; what they let through must each say why.
    const acknowledged = stack.node
      .findAll()
      .flatMap((construct) => construct.node.metadata.filter((entry) => entry.type === 'aws:cdk:acknowledged-rules'))
      .flatMap((entry) => Object.values(entry.data as Record<string, string>));
    expect(acknowledged.length).toBeGreaterThan(5);
    for (const reason of acknowledged) expect(reason.trim().length, reason).toBeGreaterThan(20);
  });

  it('sends every alarm and its recovery to the one topic, which mails the address given as context', () => {
    expect(ofType(resources, 'AWS::SNS::Topic')).toHaveLength(1);
    expect(ofType(resources, 'AWS::SNS::Subscription').map(([, sub]) => sub.Properties)).toEqual([
      expect.objectContaining({ Protocol: 'email', Endpoint: 'oncall@example.com', TopicArn: { Ref: topicId } }),
    ]);
    // Each function: errors; throttles in groups of at most 10; API 5xx; two settlement; past deadline;
    // negative clearing; two tables; the dead letters of the sweep and of each event queue; the webhook
    // deliveries' and the webhook sweep's dead letters and the webhook dispatch failures.
    const deadLetterQueues = 1 + Object.keys(EVENT_HANDLERS).length + 3;
    const expected = functions.length + Math.ceil(functions.length / 10) + 1 + 2 + 1 + 1 + 2 + deadLetterQueues;
    expect(alarms).toHaveLength(expected);
    for (const alarm of alarms) {
      expect(alarm.AlarmActions, alarm.AlarmDescription).toEqual([{ Ref: topicId }]);
      expect(alarm.OKActions, alarm.AlarmDescription).toEqual([{ Ref: topicId }]);
      // A description that tells the reader what happened and what to do, not just the metric's name.
      expect(alarm.AlarmDescription.length, alarm.AlarmDescription).toBeGreaterThan(80);
    }
  });

  it('alarms on every failure the design lists', () => {
    expect(alarmOn('5XXError')).toHaveLength(1);
    expect(alarmOn('5XXError')[0]).toMatchObject({
      Namespace: 'AWS/ApiGateway',
      Statistic: 'Average',
      Threshold: 0.01,
    });

    const errors = alarmOn('Errors').filter((alarm) => alarm.Namespace === 'AWS/Lambda');
    const throttles = JSON.stringify(alarmOn('Throttles'));
    for (const [functionId] of functions) {
      expect(
        errors.filter((alarm) => JSON.stringify(alarm.Dimensions).includes(`"${functionId}"`)),
        functionId,
      ).toHaveLength(1);
      expect(throttles, functionId).toContain(`"${functionId}"`);
    }

    const workflowId = idOf(stack.settlementWorkflow);
    for (const metricName of ['ExecutionsFailed', 'ExecutionsTimedOut']) {
      expect(alarmOn(metricName), metricName).toHaveLength(1);
      expect(JSON.stringify(alarmOn(metricName)[0].Dimensions)).toContain(`"${workflowId}"`);
    }
    for (const metricName of [METRIC.tradesPastDeadline, METRIC.negativeClearingBalances]) {
      expect(alarmOn(metricName), metricName).toHaveLength(1);
      // Exactly what the functions emit (test/integration/business-metrics.test.ts reads the same constants off the EMF lines).
      expect(alarmOn(metricName)[0]).toMatchObject({
        Namespace: METRICS_NAMESPACE,
        Dimensions: [{ Name: 'service', Value: SERVICE_NAME }],
      });
    }
    // Both tables, each with its indexes.
    const throttled = alarmOn('ReadThrottleEvents').map((alarm) => JSON.stringify(alarm.Metrics));
    expect(throttled).toHaveLength(2);
    for (const tableId of [idOf(stack.mainTable), idOf(stack.ttlTable)])
      expect(
        throttled.some((metrics) => metrics.includes(`"${tableId}"`)),
        tableId,
      ).toBe(true);
    for (const index of MAIN_TABLE.globalIndexes)
      expect(
        throttled.some((metrics) => metrics.includes(`"${index.name}"`)),
        index.name,
      ).toBe(true);
  });

  it('gives every asynchronously invoked function a dead-letter queue, and alarms on every dead-letter queue', () => {
    const queueIds = ofType(resources, 'AWS::SQS::Queue').map(([id]) => id);
    const deadLetterIds = new Set<string>();
    for (const [, rule] of ofType(resources, 'AWS::Events::Rule')) {
      for (const target of rule.Properties.Targets) {
        const functionId = target.Arn['Fn::GetAtt'][0];
        const functionDlq = resources[functionId].Properties.DeadLetterConfig?.TargetArn;
        expect(functionDlq, functionId).toBeDefined();
        expect(target.DeadLetterConfig?.Arn, functionId).toEqual(functionDlq);
        deadLetterIds.add(functionDlq['Fn::GetAtt'][0]);
      }
    }
    for (const [, queue] of ofType(resources, 'AWS::SQS::Queue')) {
      if (queue.Properties.RedrivePolicy)
        deadLetterIds.add(queue.Properties.RedrivePolicy.deadLetterTargetArn['Fn::GetAtt'][0]);
    }
    expect(deadLetterIds.size).toBeGreaterThan(0);
    const watched = JSON.stringify(alarmOn('ApproximateNumberOfMessagesVisible'));
    for (const id of deadLetterIds) {
      expect(queueIds).toContain(id);
      expect(watched, id).toContain(`"${id}"`);
    }
    for (const [, queue] of ofType(resources, 'AWS::SQS::Queue'))
      expect(queue.Properties.SqsManagedSseEnabled ?? queue.Properties.KmsMasterKeyId).toBeTruthy();
  });

  it('feeds bank and custody events to their functions through a FIFO queue each, with a dead-letter queue', () => {
    expect([...stack.eventQueues.keys()].sort()).toEqual(Object.keys(EVENT_HANDLERS).sort());
    const mappings = ofType(resources, 'AWS::Lambda::EventSourceMapping').map(([, mapping]) => mapping.Properties);
    for (const [id, { queue, deadLetters }] of stack.eventQueues) {
      const queueId = idOf(queue);
      const source = resources[queueId].Properties;
      expect(source, id).toMatchObject({
        FifoQueue: true,
        RedrivePolicy: { deadLetterTargetArn: arnOf(idOf(deadLetters)), maxReceiveCount: 5 },
      });
      // Visibility of at least six times the consumer's timeout (AWS's advice), so a slow batch is not handed out twice.
      const consumer = resources[idOf(stack.eventFunctions.get(id)!.function)].Properties;
      expect(source.VisibilityTimeout, id).toBeGreaterThanOrEqual(6 * consumer.Timeout);
      expect(resources[idOf(deadLetters)].Properties.FifoQueue, id).toBe(true);
      expect(
        mappings.filter((mapping) => JSON.stringify(mapping.EventSourceArn) === JSON.stringify(arnOf(queueId))),
        id,
      ).toEqual([
        expect.objectContaining({
          FunctionName: { Ref: idOf(stack.eventFunctions.get(id)!.function) },
          FunctionResponseTypes: ['ReportBatchItemFailures'],
        }),
      ]);
    }
    // Besides those, the webhook pipeline's two: the table's stream to the dispatcher and the delivery queue to
    // the worker (test/infra/webhooks.test.ts checks them).
    const webhookMappings = mappings.filter(
      (mapping) =>
        JSON.stringify(mapping.EventSourceArn).includes('StreamArn') ||
        JSON.stringify(mapping.EventSourceArn).includes('WebhookDeliver'),
    );
    expect(webhookMappings).toHaveLength(2);
    expect(mappings).toHaveLength(stack.eventQueues.size + webhookMappings.length);
  });

  it('has one dashboard with request, error, latency and business graphs', () => {
    const dashboards = ofType(monitoring, 'AWS::CloudWatch::Dashboard');
    expect(dashboards).toHaveLength(1);
    const body = JSON.stringify(dashboards[0]![1].Properties.DashboardBody);
    for (const title of [
      'API requests by status class',
      'API errors',
      'API latency',
      'Lambda errors',
      'Trades',
      'Payments by status',
      'Settlement executions',
    ]) {
      expect(body, title).toContain(title);
    }
    for (const metricName of Object.values(METRIC)) {
      if (metricName === METRIC.serverErrors) continue; // alarmed through API Gateway's own 5XXError
      expect(body, metricName).toContain(metricName);
    }
  });

  it('throttles the stage, logs access and errors without bodies, and keeps every log group for a month', () => {
    const [[, stage]] = ofType(resources, 'AWS::ApiGateway::Stage') as [[string, Json]];
    expect(stage.Properties.AccessLogSetting.DestinationArn).toBeDefined();
    expect(stage.Properties.MethodSettings).toContainEqual(
      expect.objectContaining({
        HttpMethod: '*',
        ResourcePath: '/*',
        LoggingLevel: 'ERROR',
        DataTraceEnabled: false,
        ThrottlingRateLimit: 100,
        ThrottlingBurstLimit: 200,
      }),
    );
    const logGroups = ofType(resources, 'AWS::Logs::LogGroup');
    for (const [id, group] of logGroups) expect(group.Properties.RetentionInDays, id).toBe(30);
    // API Gateway's own execution log group is one of them, made before the stage writes to it.
    const execution = logGroups.find(([, group]) =>
      JSON.stringify(group.Properties.LogGroupName ?? '').includes('API-Gateway-Execution-Logs_'),
    );
    expect(execution).toBeDefined();
    expect(stage.DependsOn).toContain(execution![0]);
    for (const [id, fn] of functions) expect(fn.Properties.LoggingConfig.LogGroup.Ref, id).toBeDefined();
  });

  it('protects every table with point-in-time recovery and deletion protection', () => {
    const tables = ofType(resources, 'AWS::DynamoDB::Table');
    expect(tables).toHaveLength(2);
    for (const [id, table] of tables) {
      expect(table.Properties.PointInTimeRecoverySpecification, id).toEqual({ PointInTimeRecoveryEnabled: true });
      expect(table.Properties.DeletionProtectionEnabled, id).toBe(true);
    }
  });

  it('grants no wildcard action, and a wildcard resource only for actions AWS offers on nothing narrower', () => {
    for (const [policyId, policy] of ofType(resources, 'AWS::IAM::Policy')) {
      for (const statement of policy.Properties.PolicyDocument.Statement) {
        for (const action of actionsOf(statement)) expect(action, policyId).not.toMatch(/\*/);
        if (resourcesOf(statement).includes('*')) {
          for (const action of actionsOf(statement))
            expect(WILDCARD_ONLY_ACTIONS.has(action), `${policyId}: ${action} on *`).toBe(true);
        }
        // Table grants name the table and its indexes, never `index/*`.
        if (actionsOf(statement).some((action) => action.startsWith('dynamodb:')))
          expect(JSON.stringify(statement.Resource), policyId).not.toContain('/*');
      }
    }
    // Function roles carry no AWS managed policy (AWSLambdaBasicExecutionRole would allow every log group).
    for (const [id, fn] of functions)
      expect(resources[fn.Properties.Role['Fn::GetAtt'][0]].Properties.ManagedPolicyArns, id).toBeUndefined();
  });

  it('lets reading routes only read, and no function scan or delete from the main table', () => {
    const mainArn = JSON.stringify(arnOf(idOf(stack.mainTable)));
    let readers = 0;
    for (const route of routes) {
      const statements = statementsOf(resources, idOf(stack.routeFunctions.get(route)!.function.role!));
      const actions = statements.flatMap(actionsOf);
      expect(actions, `${route.method} ${route.path}`).not.toContain('dynamodb:Scan');
      // A booking route may delete its booking queue's entries, and only those (a LeadingKeys condition).
      const onMain = statements
        .filter((statement) => JSON.stringify(statement.Resource).includes(mainArn) && !statement.Condition)
        .flatMap(actionsOf);
      if (!route.deletes) expect(onMain, `${route.method} ${route.path}`).not.toContain('dynamodb:DeleteItem');
      if (route.method === 'GET' && !route.writes) {
        readers++;
        // Its one write, if signed: the rate-limit window it counts in, in the TTL table, by a LeadingKeys condition.
        const rateWindows = { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['RATE#*'] } };
        expect(
          statements
            .filter((statement) => actionsOf(statement).some((action) => WRITE_ACTIONS.includes(action)))
            .map((statement) => [actionsOf(statement), statement.Condition]),
          `${route.method} ${route.path}`,
        ).toEqual(route.area === null ? [] : [[['dynamodb:UpdateItem'], rateWindows]]);
        expect(
          actions.filter((action) => action.startsWith('states:') || action.startsWith('sqs:')),
          `${route.method} ${route.path}`,
        ).toEqual([]);
      }
    }
    expect(readers).toBeGreaterThan(5);
    for (const [id] of functions) {
      const role = resources[id].Properties.Role['Fn::GetAtt'][0];
      expect(statementsOf(resources, role).flatMap(actionsOf), id).not.toContain('dynamodb:Scan');
    }
  });
});
