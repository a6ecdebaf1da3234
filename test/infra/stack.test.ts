import { ArnFormat } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { BOOKING_ROUTES } from '../../infra/api.js';
import { routes, type Route } from '../../infra/routes.js';
import { SETTLEMENT_STATE_NAMES } from '../../infra/settlement-workflow.js';
import { EVENT_HANDLERS } from '../../infra/event-consumers.js';
import { SETTLEMENT_TASK_HANDLERS } from '../../infra/settlement.js';
import { DEFAULT_SETTINGS } from '../../infra/stack.js';
import { RESERVED_CONCURRENCY } from '../../infra/stack-base.js';
import { LEDGER_CHECK_HANDLER } from '../../infra/ledger-check-stack.js';
import { API_FUNCTION_TIMEOUT } from '../../infra/service-function.js';
import { Template } from 'aws-cdk-lib/assertions';
import { METRIC, METRICS_NAMESPACE } from '../../lib/observability/metric-names.js';
import { describeRoutes } from '../../lib/openapi/route-table-document.js';
import { MAIN_TABLE, TTL_TABLE, type TableDefinition } from '../../lib/store/table/tables.js';
import {
  actionsOf,
  arnOf,
  type Json,
  nestedResources,
  ofType,
  resourcesOf,
  statementsOf,
  synth,
  templatesOf,
} from '../support/template.js';

/** `METHOD /path` for every API Gateway method, with the path rebuilt from the resource tree. */
function apiMethods(resources: Record<string, Json>): Map<string, Json> {
  const pathOf = (parent: Json): string => {
    if (parent['Fn::GetAtt']?.[1] === 'RootResourceId') return '';
    const resource = resources[parent.Ref];
    return `${pathOf(resource.Properties.ParentId)}/${resource.Properties.PathPart}`;
  };
  return new Map(
    ofType(resources, 'AWS::ApiGateway::Method').map(([, method]) => {
      const resourceId = method.Properties.ResourceId;
      const path = resourceId['Fn::GetAtt']?.[1] === 'RootResourceId' ? '/' : pathOf(resourceId);
      return [`${method.Properties.HttpMethod} ${path}`, method];
    }),
  );
}

function expectTableFrom(table: Json, definition: TableDefinition) {
  const keySchema = (partitionKey: string, sortKey?: string) => [
    { AttributeName: partitionKey, KeyType: 'HASH' },
    ...(sortKey ? [{ AttributeName: sortKey, KeyType: 'RANGE' }] : []),
  ];
  expect(table.Properties.KeySchema).toEqual(keySchema(definition.partitionKey, definition.sortKey));
  expect(table.Properties.BillingMode).toBe('PAY_PER_REQUEST');
  expect(table.Properties.GlobalSecondaryIndexes ?? []).toEqual(
    definition.globalIndexes.map((index) => ({
      IndexName: index.name,
      KeySchema: keySchema(index.partitionKey, index.sortKey),
      Projection: { ProjectionType: 'ALL' },
    })),
  );
  expect(table.DeletionPolicy).toBe('Retain');
  expect(table.UpdateReplacePolicy).toBe('Retain');
}

describe('the service stack, from the real route table', () => {
  const { stack, template, resources, idOf } = synth();
  const mainId = idOf(stack.mainTable);
  const ttlId = idOf(stack.ttlTable);

  it('keeps the logical ids of everything that holds data, messages, executions or an address', () => {
    // A logical id is the construct path: nesting a part of the stack in a construct of its own (infra/stack-base.ts)
    // or renaming an id would make CloudFormation replace these on the next deploy: the tables (RETAIN: orphaned,
    // then the deploy fails on the name), the queues with their messages, the state machine with its running
    // executions, the API and its stage with the URL platforms call, the keys every stored secret depends on.
    const idsOf = (type: string) =>
      ofType(resources, type)
        .map(([id]) => id)
        .sort();
    expect({
      tables: idsOf('AWS::DynamoDB::Table'),
      keys: [...idsOf('AWS::KMS::Key'), ...idsOf('AWS::SecretsManager::Secret')],
      api: [...idsOf('AWS::ApiGateway::RestApi'), ...idsOf('AWS::ApiGateway::Stage')],
      queues: idsOf('AWS::SQS::Queue'),
      stateMachines: idsOf('AWS::StepFunctions::StateMachine'),
      nestedStacks: idsOf('AWS::CloudFormation::Stack'),
      topics: idsOf('AWS::SNS::Topic'),
    }).toEqual({
      tables: ['MainTable74195DAB', 'TtlTable9A4982F8'],
      keys: ['ApiSecretsKey21716F38', 'ListCursorKeyDB4EF480'],
      api: ['ApiF70053CD', 'ApiDeploymentStagev102147F91'],
      queues: [
        'BankEventsDeadLetters6DC3D65C',
        'BankEventsQueue7D9A0BDE',
        'CustodyEventsDeadLettersCC597EDB',
        'CustodyEventsQueue7FC547C0',
        'OpenTradeSweepDeadLetters432AB91A',
        'WebhookDeliveries34BFFC0D',
        'WebhookDeliveryDeadLetters507CAD81',
        'WebhookDispatchFailures8452E209',
        'WebhookSweepDeadLettersDA01C42B',
      ],
      stateMachines: ['SettlementWorkflowC60817D2'],
      nestedStacks: [
        'ApiFirewallNestedStackApiFirewallNestedStackResource104A822F',
        'LedgerCheckNestedStackLedgerCheckNestedStackResourceA6F6B30A',
        'MonitoringAlarmsNestedStackAlarmsNestedStackResource3572E6E9',
      ],
      topics: ['MonitoringAlarmTopicAF62D4F1'],
    });
  });

  it('builds the main table from its definition, with PITR, a stream and RETAIN', () => {
    const table = resources[mainId];
    expectTableFrom(table, MAIN_TABLE);
    expect(table.Properties.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(table.Properties.StreamSpecification).toEqual({ StreamViewType: 'NEW_AND_OLD_IMAGES' });
  });

  it('builds the TTL table from its definition, with its TTL attribute and RETAIN', () => {
    const table = resources[ttlId];
    expectTableFrom(table, TTL_TABLE);
    expect(TTL_TABLE.ttlAttribute).toBeTruthy();
    expect(table.Properties.TimeToLiveSpecification).toEqual({ AttributeName: TTL_TABLE.ttlAttribute, Enabled: true });
    expect(ofType(resources, 'AWS::DynamoDB::Table')).toHaveLength(2);
  });

  it('keeps API secrets under a rotating, retained KMS key', () => {
    template.resourceCountIs('AWS::KMS::Key', 1);
    template.hasResource('AWS::KMS::Key', {
      Properties: { EnableKeyRotation: true },
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
  });

  it('makes one Node.js 22 arm64 function per route, with the configuration the handlers read', () => {
    const functions = ofType(resources, 'AWS::Lambda::Function');
    // Routes, event handlers, with the workflow its four tasks plus the sweep, and the three webhook functions.
    expect(functions).toHaveLength(routes.length + stack.eventFunctions.size + 5 + 3);
    for (const route of routes) {
      const fn = resources[idOf(stack.routeFunctions.get(route)!.function)];
      expect(fn.Properties, `${route.method} ${route.path}`).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        Timeout: API_FUNCTION_TIMEOUT.toSeconds(),
        MemorySize: 512,
        TracingConfig: { Mode: 'Active' },
        LoggingConfig: { LogGroup: { Ref: expect.any(String) } },
      });
      expect(fn.Properties.Environment.Variables).toMatchObject({
        TABLE_NAME: { Ref: mainId },
        TTL_TABLE_NAME: { Ref: ttlId },
        SECRETS_KMS_KEY_ID: arnOf(idOf(stack.secretsKey)),
        QUOTE_TTL_SECONDS: expect.stringMatching(/^\d+$/),
        PRICE_MAX_AGE_SECONDS: expect.stringMatching(/^\d+$/),
        SETTLEMENT_SESSION_SECONDS: expect.stringMatching(/^\d+$/),
        SPOT_SETTLEMENT_DEADLINE_SECONDS: expect.stringMatching(/^\d+$/),
        SETTLEMENT_LEG_SECONDS: String(30 * 24 * 3600),
        LOG_LEVEL: 'info',
        TRACING: 'active',
      });
    }
    // Every function's logs have a retention; none falls back to a never-expiring group.
    for (const [, logGroup] of ofType(resources, 'AWS::Logs::LogGroup'))
      expect(logGroup.Properties.RetentionInDays).toBe(30);
  });

  it('exposes exactly one proxy method per route, on the route path, invoking that route function', () => {
    const methods = apiMethods(resources);
    const unsigned = routes.filter((route) => route.area === null).map((route) => `ANY ${route.path}`);
    expect([...methods.keys()].sort()).toEqual(
      [...routes.map((route) => `${route.method} ${route.path}`), ...unsigned].sort(),
    );
    for (const route of routes) {
      const integration = methods.get(`${route.method} ${route.path}`).Properties.Integration;
      expect(integration.Type).toBe('AWS_PROXY');
      expect(JSON.stringify(integration.Uri)).toContain(
        JSON.stringify(arnOf(idOf(stack.routeFunctions.get(route)!.function))),
      );
    }
  });

  it('answers other methods on the unsigned routes (GET /time, the API description) with 405 from a mock, no function', () => {
    const methods = apiMethods(resources);
    for (const route of routes.filter((r) => r.area === null)) {
      const any = methods.get(`ANY ${route.path}`).Properties;
      expect(any.Integration.Type).toBe('MOCK');
      expect(any.Integration.RequestTemplates).toEqual({ 'application/json': '{"statusCode": 405}' });
      expect(any.Integration.IntegrationResponses).toEqual([
        expect.objectContaining({
          StatusCode: '405',
          ResponseParameters: { 'method.response.header.X-Request-Id': 'context.requestId' },
        }),
      ]);
    }
    expect(routes.filter((r) => r.area === null).map((r) => r.path)).toEqual([
      '/time',
      '/openapi.json',
      '/docs',
      '/docs/redoc.standalone.js',
    ]);
  });

  it('deploys stage v1 with access logs, tracing and throttling', () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: 'v1',
      TracingEnabled: true,
      AccessLogSetting: { DestinationArn: Match.anyValue(), Format: Match.anyValue() },
      MethodSettings: Match.arrayWith([
        Match.objectLike({ ThrottlingRateLimit: Match.anyValue(), ThrottlingBurstLimit: Match.anyValue() }),
      ]),
    });
  });

  it('grants API functions what their route needs, and DynamoDB actions on nothing but the two tables', () => {
    const tableIds = [mainId, ttlId];
    for (const [, policy] of ofType(resources, 'AWS::IAM::Policy')) {
      for (const statement of policy.Properties.PolicyDocument.Statement) {
        if (!actionsOf(statement).some((action) => action.startsWith('dynamodb:'))) continue;
        // Reading a table's stream needs ListStreams, which AWS authorises on `*` only (the webhook dispatcher's mapping).
        if (
          actionsOf(statement)
            .filter((action) => action.startsWith('dynamodb:'))
            .every((action) => action === 'dynamodb:ListStreams')
        )
          continue;
        expect(actionsOf(statement)).not.toContain('dynamodb:*');
        for (const resource of resourcesOf(statement)) {
          expect(resource).not.toBe('*');
          expect(tableIds.some((id) => JSON.stringify(resource).includes(`"${id}"`))).toBe(true);
        }
      }
      // The ops CLI creates API secrets; only the routes storing a webhook endpoint's secret encrypt (checked per route below).
      for (const statement of policy.Properties.PolicyDocument.Statement) {
        const kmsActions = actionsOf(statement).filter((action) => action.startsWith('kms:'));
        expect(
          kmsActions.every((action) =>
            ['kms:Decrypt', 'kms:Encrypt', 'kms:ReEncrypt*', 'kms:GenerateDataKey*'].includes(action),
          ),
        ).toBe(true);
      }
    }

    const kinds = new Set<string>();
    for (const route of routes) {
      const name = `${route.method} ${route.path}`;
      const statements = statementsOf(resources, idOf(stack.routeFunctions.get(route)!.function.role!));
      const granted = (action: string) =>
        statements.filter((statement) => actionsOf(statement).includes(action)).flatMap(resourcesOf);
      const touchesTtl = statements.some((statement) => JSON.stringify(resourcesOf(statement)).includes(`"${ttlId}"`));
      if (route.area === null) {
        // The unsigned route reads no key and stores nothing.
        kinds.add('unsigned');
        expect(
          statements.flatMap(actionsOf).filter((action) => /^(dynamodb|kms):/.test(action)),
          name,
        ).toEqual([]);
        continue;
      }
      expect(granted('kms:Decrypt'), name).toEqual([arnOf(idOf(stack.secretsKey))]);
      for (const action of ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'])
        expect(granted(action), `${name} ${action}`).toContainEqual(arnOf(mainId));
      const mutates = route.method !== 'GET';
      const writesMain = mutates || route.writes === true;
      kinds.add(mutates ? 'post' : writesMain ? 'storing get' : 'reading get');
      expect(granted('kms:Encrypt').length > 0, `${name} kms:Encrypt`).toBe(route.encryptsSecrets === true);
      for (const action of ['dynamodb:PutItem', 'dynamodb:UpdateItem']) {
        expect(
          granted(action).filter((resource) => JSON.stringify(resource).includes(`"${mainId}"`)).length > 0,
          `${name} ${action}`,
        ).toBe(writesMain);
      }
      // Replay, idempotency and client-id records are kept for mutating requests and the GETs that store a
      // quote (claimed against replays and idempotent like a POST); every signed route counts its rate limit
      // there (RATE_LIMIT_COUNTER=table), so any other GET may update its rate windows and nothing else.
      expect(touchesTtl, name).toBe(true);
      if (writesMain) {
        for (const action of ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'])
          expect(granted(action), `${name} ${action}`).toContainEqual(arnOf(ttlId));
      } else {
        const onTtl = statements.filter((statement) => JSON.stringify(resourcesOf(statement)).includes(`"${ttlId}"`));
        expect(
          onTtl.map((statement) => [actionsOf(statement), resourcesOf(statement), statement.Condition]),
          name,
        ).toEqual([
          [
            ['dynamodb:UpdateItem'],
            [arnOf(ttlId)],
            { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['RATE#*'] } },
          ],
        ]);
      }
      // DeleteItem on the main table: unconditioned for a route that deletes, only the booking queue's keys for
      // a route that books through the group-commit engine, none otherwise.
      const deletesMain = statements.filter(
        (statement) =>
          actionsOf(statement).includes('dynamodb:DeleteItem') &&
          JSON.stringify(resourcesOf(statement)).includes(`"${mainId}"`),
      );
      const books = BOOKING_ROUTES.some((r) => r.method === route.method && r.path === route.path);
      expect(deletesMain.filter((statement) => !statement.Condition).length > 0, name).toBe(route.deletes === true);
      expect(
        deletesMain.filter((statement) => statement.Condition).map((statement) => statement.Condition),
        name,
      ).toEqual(books ? [{ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['BOOKINGS#*'] } }] : []);
    }
    // Every kind of route is in the table, so none of the branches above went unchecked.
    expect([...kinds].sort()).toEqual(['post', 'reading get', 'storing get', 'unsigned']);
  });

  it('outputs the API URL, both table names and the KMS key', () => {
    template.hasOutput('ApiUrl', {});
    template.hasOutput('MainTableName', { Value: { Ref: mainId } });
    template.hasOutput('TtlTableName', { Value: { Ref: ttlId } });
    template.hasOutput('SecretsKmsKeyId', { Value: { Ref: idOf(stack.secretsKey) } });
  });

  it('runs settlement on a Standard state machine, logging errors without execution data', () => {
    template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      StateMachineType: 'STANDARD',
      LoggingConfiguration: Match.objectLike({ Level: 'ERROR', IncludeExecutionData: false }),
      TracingConfiguration: { Enabled: true },
    });
  });

  it('wires the real task handlers, and lets POST /trades (only it) start executions', () => {
    const workflowId = idOf(stack.settlementWorkflow);
    const tasks = ofType(resources, 'AWS::Lambda::Function').filter(([id]) => id.startsWith('Settlement'));
    expect(tasks.map(([, task]) => task.Properties.Description).sort()).toEqual(
      Object.keys(SETTLEMENT_TASK_HANDLERS)
        .map((name) => `settlement workflow: ${name}`)
        .sort(),
    );
    const definition = JSON.stringify(resources[workflowId].Properties.DefinitionString);
    for (const [taskId] of tasks) expect(definition).toContain(JSON.stringify(arnOf(taskId)));
    expect(routes.some((route) => route.method === 'POST' && route.path === '/trades')).toBe(true);
    for (const route of routes) {
      const fn = stack.routeFunctions.get(route)!.function;
      const storesTrades = route.method === 'POST' && route.path === '/trades';
      expect(resources[idOf(fn)].Properties.Environment.Variables.STATE_MACHINE_ARN, route.path).toEqual(
        storesTrades ? { Ref: workflowId } : undefined,
      );
      const starts = statementsOf(resources, idOf(fn.role!)).filter((statement) =>
        actionsOf(statement).includes('states:StartExecution'),
      );
      expect(starts.flatMap(resourcesOf), route.path).toEqual(storesTrades ? [{ Ref: workflowId }] : []);
    }
  });

  it('lets the continue task, and no other task, start the next leg of this state machine, by its name', () => {
    const machine = resources[idOf(stack.settlementWorkflow)].Properties;
    expect(machine.StateMachineName).toBe(`${stack.stackName}-settlement`);
    const machineArn = stack.resolve(
      stack.formatArn({
        service: 'states',
        resource: 'stateMachine',
        resourceName: machine.StateMachineName,
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      }),
    );
    const tasks = ofType(resources, 'AWS::Lambda::Function').filter(([id]) => id.startsWith('Settlement'));
    for (const [id, task] of tasks) {
      const continues = task.Properties.Description === 'settlement workflow: continue';
      const role = task.Properties.Role['Fn::GetAtt'][0];
      const starts = statementsOf(resources, role).filter((statement) =>
        actionsOf(statement).includes('states:StartExecution'),
      );
      expect(starts.flatMap(resourcesOf), id).toEqual(continues ? [machineArn] : []);
      expect(task.Properties.Environment.Variables.STATE_MACHINE_ARN, id).toEqual(continues ? machineArn : undefined);
    }
  });

  it('sweeps overdue open trades on a schedule, with start, read and redrive rights and one kind of table write', () => {
    const sweep = ofType(resources, 'AWS::Lambda::Function').find(([, fn]) =>
      String(fn.Properties.Description).includes('revive overdue open trades'),
    );
    expect(sweep).toBeDefined();
    const [sweepId, sweepFn] = sweep!;
    expect(sweepFn.Properties.Environment.Variables.STATE_MACHINE_ARN).toEqual({ Ref: idOf(stack.settlementWorkflow) });
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(5 minutes)',
      Targets: Match.arrayWith([Match.objectLike({ Arn: arnOf(sweepId) })]),
    });
    const actions = statementsOf(resources, idOf(stack.sweepFunction.function.role!)).flatMap(actionsOf);
    expect(actions.filter((action) => action.startsWith('states:')).sort()).toEqual([
      'states:DescribeExecution',
      'states:RedriveExecution',
      'states:StartExecution',
    ]);
    // The only write: a visited trade's due time on the open-trades index (UpdateItem on the main table).
    const writes = statementsOf(resources, idOf(stack.sweepFunction.function.role!)).filter((statement) =>
      actionsOf(statement).some((action) => action.startsWith('dynamodb:') && /Put|Update|Delete|Write/.test(action)),
    );
    expect(writes.flatMap(actionsOf)).toEqual(['dynamodb:UpdateItem']);
    expect(writes.flatMap(resourcesOf)).toEqual([{ 'Fn::GetAtt': [mainId, 'Arn'] }]);
    expect(sweepFn.Properties.Environment.Variables.SETTLEMENT_SWEEP_MAX_TRADES).toBe('1000');
  });

  it('checks the ledger hourly (a nested stack), reading only, and alarms on its discrepancies to the ops topic', () => {
    // Three nested stacks: this one, the API's firewall and the alarms.
    expect(ofType(resources, 'AWS::CloudFormation::Stack')).toHaveLength(3);
    const nested = stack.ledgerCheck;
    const inner = Template.fromStack(nested).toJSON().Resources as Record<string, Json>;
    const innerId = (construct: { node: { defaultChild?: unknown } }) =>
      nested.getLogicalId(construct.node.defaultChild as never);
    const checkId = innerId(nested.check.function);
    expect(inner[checkId].Properties).toMatchObject({ Runtime: 'nodejs22.x', Timeout: 900 });
    expect(LEDGER_CHECK_HANDLER).toBe('functions/reconciliation/check-ledger.ts');
    const [rule] = ofType(inner, 'AWS::Events::Rule');
    expect(rule![1].Properties).toMatchObject({
      ScheduleExpression: 'rate(1 hour)',
      Targets: [expect.objectContaining({ Arn: arnOf(checkId) })],
    });
    const actions = statementsOf(inner, innerId(nested.check.function.role!))
      .flatMap(actionsOf)
      .filter((action) => action.startsWith('dynamodb:'));
    expect(actions.sort()).toEqual(['dynamodb:DescribeTable', 'dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:Scan']);
    const alarms = ofType(inner, 'AWS::CloudWatch::Alarm').filter(
      ([, alarm]) => alarm.Properties.MetricName === METRIC.ledgerDiscrepancies,
    );
    expect(alarms).toHaveLength(1);
    expect(alarms[0]![1].Properties).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    // The ops topic of the parent stack, passed in as a parameter.
    const topicParameter = alarms[0]![1].Properties.AlarmActions[0].Ref;
    const nestedResource = resources[stack.getLogicalId(nested.nestedStackResource!)];
    expect(nestedResource.Properties.Parameters[topicParameter]).toEqual({ Ref: idOf(stack.monitoring.topic) });
  });

  it('deploys a function per event handler with main-table access', () => {
    expect([...stack.eventFunctions.keys()].sort()).toEqual(Object.keys(EVENT_HANDLERS).sort());
    for (const [id, fn] of stack.eventFunctions) {
      expect(resources[idOf(fn.function)].Properties.Runtime, id).toBe('nodejs22.x');
      const statements = statementsOf(resources, idOf(fn.function.role!));
      const text = JSON.stringify(
        statements
          .filter((statement) => actionsOf(statement).some((action) => action.startsWith('dynamodb:')))
          .flatMap(resourcesOf),
      );
      expect(text, id).toContain(`"${mainId}"`);
      expect(text, id).not.toContain(`"${ttlId}"`);
    }
  });
});

describe('the route table and the handlers it names', () => {
  it('marks encryptsSecrets (kms:Encrypt) on exactly the routes whose handlers seal the secret their answer shows', async () => {
    const described = await describeRoutes(routes);
    for (const [i, route] of routes.entries()) {
      expect(route.encryptsSecrets === true, `${route.method} ${route.path}`).toBe(
        described[i]!.api?.secretInResponse === true,
      );
    }
    expect(routes.filter((route) => route.encryptsSecrets).length).toBeGreaterThan(0);
  });

  it('marks lists (the cursor key) on exactly the routes whose query takes a cursor', async () => {
    const described = await describeRoutes(routes);
    for (const [i, route] of routes.entries()) {
      const shape = (described[i]!.api?.query as { _zod?: { def?: { shape?: object } } } | undefined)?._zod?.def?.shape;
      expect(route.lists === true, `${route.method} ${route.path}`).toBe(shape !== undefined && 'cursor' in shape);
    }
    expect(routes.filter((route) => route.lists).length).toBeGreaterThan(5);
  });
});

describe('the service stack, with a fixture route table and workflow', () => {
  // Existing handlers stand in for routes and tasks not written yet: only the wiring is under test.
  const standIn = 'functions/system/get-time.ts';
  const fixtureRoutes: Route[] = [
    { method: 'GET', path: '/time', handler: standIn, area: null },
    { method: 'POST', path: '/trades', handler: standIn, area: 'trades' },
    { method: 'GET', path: '/trades', handler: standIn, area: 'trades' },
    { method: 'GET', path: '/trades/{trade_id}', handler: standIn, area: 'trades' },
    { method: 'POST', path: '/participants/customers/new', handler: standIn, area: 'participants' },
  ];
  const { stack, template, resources, idOf } = synth({
    routes: fixtureRoutes,
    settlementTaskHandlers: { activate: standIn, attempt: standIn, default: standIn, continue: standIn },
  });
  const workflow = stack.settlementWorkflow;
  const workflowId = idOf(workflow);

  it('builds nested and {param} resources, sharing parents between routes', () => {
    // The unsigned GET /time also answers other methods with 405 (ANY, a mock).
    expect([...apiMethods(resources).keys()].sort()).toEqual(
      [...fixtureRoutes.map((route) => `${route.method} ${route.path}`), 'ANY /time'].sort(),
    );
    const pathParts = ofType(resources, 'AWS::ApiGateway::Resource').map(
      ([, resource]) => resource.Properties.PathPart,
    );
    expect(pathParts.sort()).toEqual(['customers', 'new', 'participants', 'time', 'trades', '{trade_id}'].sort());
  });

  it('is a Standard state machine, logged at ERROR to its own group, traced, invoking the four task functions', () => {
    expect(workflow).toBeDefined();
    const machine = resources[workflowId].Properties;
    expect(machine.StateMachineType).toBe('STANDARD');
    expect(machine.TracingConfiguration).toEqual({ Enabled: true });
    expect(machine.LoggingConfiguration).toMatchObject({
      Level: 'ERROR',
      IncludeExecutionData: false,
      Destinations: [{ CloudWatchLogsLogGroup: { LogGroupArn: expect.anything() } }],
    });

    const definition = JSON.stringify(machine.DefinitionString);
    for (const name of Object.values(SETTLEMENT_STATE_NAMES)) expect(definition).toContain(name);
    const invoked = statementsOf(resources, idOf(workflow.role))
      .filter((statement) => actionsOf(statement).includes('lambda:InvokeFunction'))
      .flatMap(resourcesOf);
    const taskIds = ofType(resources, 'AWS::Lambda::Function')
      .map(([id]) => id)
      .filter((id) => id.startsWith('Settlement'));
    expect(taskIds).toHaveLength(4);
    for (const taskId of taskIds) {
      expect(definition).toContain(JSON.stringify(arnOf(taskId)));
      expect(invoked).toContainEqual(arnOf(taskId));
    }
  });

  it('gives the trade-storing route, and only it, the state machine ARN and StartExecution', () => {
    for (const route of fixtureRoutes) {
      const fn = stack.routeFunctions.get(route)!.function;
      const storesTrades = route.method === 'POST' && route.path === '/trades';
      const variables = resources[idOf(fn)].Properties.Environment.Variables;
      expect(variables.STATE_MACHINE_ARN, route.path).toEqual(storesTrades ? { Ref: workflowId } : undefined);
      const starts = statementsOf(resources, idOf(fn.role!)).filter((statement) =>
        actionsOf(statement).includes('states:StartExecution'),
      );
      expect(starts.flatMap(resourcesOf), route.path).toEqual(storesTrades ? [{ Ref: workflowId }] : []);
    }
  });

  it('gives task functions the main table only, and no key', () => {
    const tasks = ofType(resources, 'AWS::Lambda::Function').filter(([id]) => id.startsWith('Settlement'));
    for (const [, task] of tasks) {
      expect(task.Properties.Timeout).toBeGreaterThan(29);
      const statements = statementsOf(resources, task.Properties.Role['Fn::GetAtt'][0]);
      const dynamoResources = statements
        .filter((statement) => actionsOf(statement).some((action) => action.startsWith('dynamodb:')))
        .flatMap(resourcesOf);
      expect(JSON.stringify(dynamoResources)).toContain(`"${idOf(stack.mainTable)}"`);
      expect(JSON.stringify(dynamoResources)).not.toContain(`"${idOf(stack.ttlTable)}"`);
      expect(statements.flatMap(actionsOf).some((action) => action.startsWith('kms:'))).toBe(false);
    }
  });

  it('keeps the task timeout in the definition above the Lambda timeout', () => {
    const definition = JSON.stringify(resources[workflowId].Properties.DefinitionString);
    const taskTimeouts = [...definition.matchAll(/\\"TimeoutSeconds\\":(\d+)/g)].map((match) => Number(match[1]));
    expect(taskTimeouts.length).toBeGreaterThan(0);
    const lambdaTimeout = Math.max(
      ...ofType(resources, 'AWS::Lambda::Function')
        .filter(([id]) => id.startsWith('Settlement'))
        .map(([, task]) => task.Properties.Timeout),
    );
    for (const timeout of taskTimeouts) expect(timeout).toBeGreaterThan(lambdaTimeout);
    template.resourceCountIs('AWS::StepFunctions::StateMachine', 1);
  });
});

describe('tenants: the per-key rate guard and reserved concurrency', () => {
  const { stack, resources, idOf } = synth();
  const functionsBy = (description: string) =>
    ofType(resources, 'AWS::Lambda::Function').filter(([, fn]) => fn.Properties.Description === description);

  it('puts a WAF web ACL on the API stage with a rate-based rule keyed on the X-SVC-API-KEY header, answering 429', () => {
    // In a nested stack of its own (the service stack is at 500 resources).
    expect(ofType(resources, 'AWS::WAFv2::WebACL')).toEqual([]);
    const inner = Template.fromStack(stack.apiFirewall).toJSON().Resources as Record<string, Json>;
    const [[aclId, acl]] = ofType(inner, 'AWS::WAFv2::WebACL') as [[string, Json]];
    expect(acl.Properties.Scope).toBe('REGIONAL');
    expect(acl.Properties.DefaultAction).toEqual({ Allow: {} });
    const [rule] = acl.Properties.Rules;
    expect(rule.Statement.RateBasedStatement).toEqual({
      Limit: DEFAULT_SETTINGS.wafRequestsPerKeyPerMinute,
      EvaluationWindowSec: 60,
      AggregateKeyType: 'CUSTOM_KEYS',
      CustomKeys: [{ Header: { Name: 'x-svc-api-key', TextTransformations: [{ Priority: 0, Type: 'NONE' }] } }],
    });
    const response = rule.Action.Block.CustomResponse;
    expect(response.ResponseCode).toBe(429);
    expect(response.ResponseHeaders.map((header: Json) => header.Name)).toEqual([
      'Retry-After',
      'RateLimit-Policy',
      'RateLimit',
    ]);
    expect(JSON.parse(acl.Properties.CustomResponseBodies[response.CustomResponseBodyKey].Content)).toEqual({
      errors: [expect.stringMatching(/^rate limit exceeded/)],
    });

    const [[, association]] = ofType(inner, 'AWS::WAFv2::WebACLAssociation') as [[string, Json]];
    expect(association.Properties.WebACLArn).toEqual(arnOf(aclId));
    // The stage of this API, by its id and name; the nested stack is made after the stage.
    const arn = JSON.stringify(association.Properties.ResourceArn);
    expect(arn).toContain(`/restapis/",{"Ref":"${idOf(stack.api)}RestApiId"},"/stages/v1"`);
    expect(
      stack.resolve(
        resources[stack.getLogicalId(stack.apiFirewall.nestedStackResource!)].Properties.Parameters[
          `${idOf(stack.api)}RestApiId`
        ],
      ),
    ).toEqual({ Ref: idOf(stack.api) });
    const nestedFirewall = resources[stack.getLogicalId(stack.apiFirewall.nestedStackResource!)];
    expect(nestedFirewall.DependsOn).toContain(idOf(stack.api.deploymentStage));
    // The stage-wide throttle stays as the last guard.
    const [[, stage]] = ofType(resources, 'AWS::ApiGateway::Stage') as [[string, Json]];
    expect(stage.Properties.MethodSettings[0]).toMatchObject({ ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 });
  });

  it('sets the default per-key limit on every function, counted in the TTL table', () => {
    for (const [, fn] of ofType(resources, 'AWS::Lambda::Function')) {
      if (!fn.Properties.Environment?.Variables?.TABLE_NAME) continue;
      expect(fn.Properties.Environment.Variables).toMatchObject({
        RATE_LIMIT_RPS: String(DEFAULT_SETTINGS.rateLimitRps),
        RATE_LIMIT_BURST: String(DEFAULT_SETTINGS.rateLimitBurst),
        RATE_LIMIT_COUNTER: 'table',
      });
    }
  });

  it('reserves concurrency for the settlement tasks and the bank, custody and webhook consumers, and for no API function', () => {
    const reserved = (description: string) =>
      functionsBy(description).map(([, fn]) => fn.Properties.ReservedConcurrentExecutions);
    for (const task of Object.keys(SETTLEMENT_TASK_HANDLERS))
      expect(reserved(`settlement workflow: ${task}`)).toEqual([RESERVED_CONCURRENCY.settlementTask]);
    expect(reserved('settlement workflow: revive overdue open trades (no live execution)')).toEqual([
      RESERVED_CONCURRENCY.settlementSweep,
    ]);
    for (const handler of Object.values(EVENT_HANDLERS))
      expect(reserved(`events: ${handler}`)).toEqual([RESERVED_CONCURRENCY.eventConsumer]);
    expect(reserved('webhooks: stream -> one delivery per subscribed endpoint')).toEqual([
      RESERVED_CONCURRENCY.webhookDispatcher,
    ]);
    expect(reserved('webhooks: one signed attempt per queued delivery')).toEqual([
      RESERVED_CONCURRENCY.webhookDelivery,
    ]);
    expect(reserved('webhooks: queue due retries, dispatch events the stream missed')).toEqual([
      RESERVED_CONCURRENCY.webhookSweep,
    ]);
    for (const fn of stack.routeFunctions.values())
      expect(resources[idOf(fn.function)].Properties.ReservedConcurrentExecutions).toBeUndefined();
    // Lambda keeps 100 unreserved: the README's Deploying section names the quota this needs.
    const total = ofType(resources, 'AWS::Lambda::Function').reduce(
      (sum, [, fn]) => sum + (fn.Properties.ReservedConcurrentExecutions ?? 0),
      0,
    );
    expect(total).toBe(117);
  });
});

/**
 * What AWS enforces on the deployed stack and one machine never shows (design, "Deployed as run"): the alarm
 * topic's policy, event source mappings against reserved concurrency, the API functions' timeout under API
 * Gateway's, CloudFormation's ceilings, and where Step Functions may deliver logs.
 */
describe('the deployed stack, against the limits AWS enforces', () => {
  const { stack, template, resources, idOf } = synth();

  it('lets CloudWatch, for this account only, publish to the alarm topic (its own policy replaces SNS default one)', () => {
    const topicId = idOf(stack.monitoring.topic);
    const policies = ofType(resources, 'AWS::SNS::TopicPolicy');
    expect(policies).toHaveLength(1);
    const [[, policy]] = policies as [[string, Json]];
    expect(policy.Properties.Topics).toEqual([{ Ref: topicId }]);
    const statements: Json[] = policy.Properties.PolicyDocument.Statement;
    const allows = statements.filter((statement) => statement.Effect === 'Allow');
    expect(allows).toEqual([
      expect.objectContaining({
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Action: 'sns:Publish',
        Resource: { Ref: topicId },
        Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
      }),
    ]);
    // enforceSSL's Deny stays: it only refuses plain-http requests, which CloudWatch does not make.
    expect(statements.filter((statement) => statement.Effect === 'Deny')).toEqual([
      expect.objectContaining({ Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    ]);
    // Every alarm, the alarms stack's and the ledger check's, notifies that topic and no other.
    const alarms = [stack.monitoring.alarmStack, stack.ledgerCheck].flatMap((nested) =>
      ofType(nestedResources(stack, resources, nested), 'AWS::CloudWatch::Alarm'),
    );
    expect(alarms.length).toBeGreaterThan(60);
    for (const [id, alarm] of alarms) {
      expect(alarm.Properties.AlarmActions, id).toEqual([{ Ref: topicId }]);
      expect(alarm.Properties.OKActions, id).toEqual([{ Ref: topicId }]);
    }
  });

  it("caps every queue's event source mapping at its function's reserved concurrency (bank and custody FIFO queues included)", () => {
    const sqsMappings = ofType(resources, 'AWS::Lambda::EventSourceMapping').filter(
      ([, mapping]) => !JSON.stringify(mapping.Properties.EventSourceArn).includes('StreamArn'),
    );
    // Bank and custody, and the webhook deliveries.
    expect(sqsMappings).toHaveLength(stack.eventQueues.size + 1);
    for (const [id, mapping] of sqsMappings) {
      const reserved = resources[mapping.Properties.FunctionName.Ref].Properties.ReservedConcurrentExecutions;
      const maximum = mapping.Properties.ScalingConfig?.MaximumConcurrency;
      expect(reserved, id).toBeGreaterThanOrEqual(2);
      // SQS's lowest MaximumConcurrency is 2.
      expect(maximum, id).toBeGreaterThanOrEqual(2);
      expect(maximum, id).toBeLessThanOrEqual(reserved);
    }
    for (const [id, { queue }] of stack.eventQueues) {
      const [[, mapping]] = sqsMappings.filter(
        ([, m]) => JSON.stringify(m.Properties.EventSourceArn) === JSON.stringify(arnOf(idOf(queue))),
      ) as [[string, Json]];
      expect(mapping.Properties.ScalingConfig, id).toEqual({ MaximumConcurrency: RESERVED_CONCURRENCY.eventConsumer });
    }
  });

  it("times API functions out before API Gateway's 29 s, so a request out of time still answers from the function", () => {
    expect(API_FUNCTION_TIMEOUT.toSeconds()).toBeLessThanOrEqual(28);
    for (const [route, fn] of stack.routeFunctions)
      expect(resources[idOf(fn.function)].Properties.Timeout, `${route.method} ${route.path}`).toBeLessThanOrEqual(28);
  });

  it('lets API Gateway invoke each route function by one permission, for its own method on the deployed stage', () => {
    const permissions = ofType(resources, 'AWS::Lambda::Permission');
    for (const route of routes) {
      const fnId = idOf(stack.routeFunctions.get(route)!.function);
      const own = permissions.filter(
        ([, permission]) => permission.Properties.FunctionName['Fn::GetAtt']?.[0] === fnId,
      );
      expect(own, `${route.method} ${route.path}`).toHaveLength(1);
      const [[, permission]] = own as [[string, Json]];
      expect(permission.Properties.Principal).toBe('apigateway.amazonaws.com');
      // `<api>/<the v1 stage>/GET/transfers/*`: the method's path with `*` for its parameters; no test-invoke-stage.
      const arn = JSON.stringify(permission.Properties.SourceArn);
      expect(arn, `${route.method} ${route.path}`).toContain(
        `{"Ref":"${idOf(stack.api.deploymentStage)}"},"/${route.method}${route.path.replace(/\{[^}]+\}/g, '*')}"`,
      );
      expect(arn).not.toContain('test-invoke-stage');
    }
    // Besides the routes', only the two schedules' (EventBridge invoking the sweeps).
    expect(permissions).toHaveLength(routes.length + 2);
  });

  it("keeps every template well inside CloudFormation's ceilings: 400 of 500 resources, 40 of 60 dynamic references", () => {
    const templates = templatesOf(stack);
    expect(templates.map(([path]) => path).sort()).toEqual(
      [
        stack.node.path,
        stack.apiFirewall.node.path,
        stack.ledgerCheck.node.path,
        stack.monitoring.alarmStack.node.path,
      ].sort(),
    );
    for (const [path, body] of templates) {
      expect(Object.keys(body.Resources).length, `${path}: resources`).toBeLessThanOrEqual(400);
      const dynamicReferences = JSON.stringify(body).match(/\{\{resolve:/g) ?? [];
      expect(dynamicReferences.length, `${path}: dynamic references`).toBeLessThanOrEqual(40);
      // A nested stack takes the parent's values as parameters: 200 at most per template.
      expect(Object.keys(body.Parameters ?? {}).length, `${path}: parameters`).toBeLessThanOrEqual(160);
    }
    // The service stack itself, counted separately: it is where routes add resources.
    expect(Object.keys(resources).length).toBeLessThanOrEqual(400);
  });

  it('lets the listing routes, and no other function, read the cursor key from its secret at run time', () => {
    const secretRef = { Ref: idOf(stack.listCursorKey) };
    for (const [id, fn] of ofType(resources, 'AWS::Lambda::Function')) {
      const variables = fn.Properties.Environment.Variables;
      // Never the key itself, resolved into the environment (plaintext there, and a dynamic reference each).
      expect(variables.LIST_CURSOR_KEY, id).toBeUndefined();
      const route = [...stack.routeFunctions].find(([, each]) => idOf(each.function) === id)?.[0];
      const lists = route?.lists === true;
      expect(variables.LIST_CURSOR_SECRET_ARN, id).toEqual(lists ? secretRef : undefined);
      const reads = statementsOf(resources, fn.Properties.Role['Fn::GetAtt'][0]).filter((statement) =>
        actionsOf(statement).some((action) => action.startsWith('secretsmanager:')),
      );
      expect(reads.flatMap(actionsOf), id).toEqual(lists ? ['secretsmanager:GetSecretValue'] : []);
      expect(reads.flatMap(resourcesOf), id).toEqual(lists ? [secretRef] : []);
    }
    expect(JSON.stringify(resources)).not.toContain('{{resolve:secretsmanager');
  });

  it('logs the state machine under /aws/vendedlogs/states/', () => {
    const destination =
      resources[idOf(stack.settlementWorkflow)].Properties.LoggingConfiguration.Destinations[0].CloudWatchLogsLogGroup
        .LogGroupArn;
    const logGroupId = destination['Fn::GetAtt'][0];
    expect(resources[logGroupId].Properties.LogGroupName).toBe(`/aws/vendedlogs/states/${stack.stackName}-settlement`);
    template.resourceCountIs('AWS::StepFunctions::StateMachine', 1);
  });
});
