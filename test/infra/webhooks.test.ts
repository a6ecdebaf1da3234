import { describe, expect, it } from 'vitest';
import { routes } from '../../infra/routes.js';
import { WEBHOOK_HANDLERS } from '../../infra/webhooks.js';
import { DISPATCH_STREAM_SOURCE } from '../../lib/webhooks/stream-records.js';
import { actionsOf, type Json, ofType, statementsOf, synth } from '../support/template.js';

describe('webhooks on AWS', () => {
  const { stack, resources } = synth();
  const functions = ofType(resources, 'AWS::Lambda::Function');
  const functionId = (handlerDescription: string) =>
    functions.find(([, fn]) => String(fn.Properties.Description).startsWith(handlerDescription))![0];
  const mappings = ofType(resources, 'AWS::Lambda::EventSourceMapping').map(([, mapping]) => mapping.Properties);
  const queues = ofType(resources, 'AWS::SQS::Queue');

  it('dispatches from the table stream, filtered to event inserts, item by item, bisecting, with an on-failure queue', () => {
    const dispatcher = functionId('webhooks: stream');
    const mapping = mappings.find((m) => m.FunctionName.Ref === dispatcher)!;
    expect(mapping.EventSourceArn).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^MainTable/), 'StreamArn'] });
    expect(mapping).toMatchObject({
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      MaximumRetryAttempts: 10,
      StartingPosition: 'TRIM_HORIZON',
    });
    // The local poller reads with these very settings; it has no batching window, and neither has the mapping.
    expect(mapping).toMatchObject({
      BatchSize: DISPATCH_STREAM_SOURCE.batchSize,
      ParallelizationFactor: DISPATCH_STREAM_SOURCE.parallelizationFactor,
    });
    expect(mapping.MaximumBatchingWindowInSeconds ?? 0).toBe(0);
    // One shard's concurrent batches at least, or they would be throttled.
    const reserved = functions.find(([id]) => id === dispatcher)![1].Properties.ReservedConcurrentExecutions;
    expect(reserved).toBeGreaterThanOrEqual(DISPATCH_STREAM_SOURCE.parallelizationFactor);
    expect(JSON.parse(mapping.FilterCriteria.Filters[0].Pattern)).toEqual({
      eventName: ['INSERT'],
      dynamodb: { NewImage: { type: { S: ['event', 'event_redelivery'] } } },
    });
    expect(mapping.DestinationConfig.OnFailure.Destination['Fn::GetAtt'][0]).toMatch(/^WebhookDispatchFailures/);
    const table = ofType(resources, 'AWS::DynamoDB::Table').find(([id]) => id.startsWith('MainTable'))![1];
    expect(table.Properties.StreamSpecification.StreamViewType).toMatch(/NEW_/);
    expect(table.Properties.TimeToLiveSpecification).toEqual({ AttributeName: 'ttl', Enabled: true });
  });

  it('delivers from an SQS queue with partial batch failures, a visibility of six worker timeouts and a dead-letter queue', () => {
    const worker = functionId('webhooks: one signed attempt');
    const mapping = mappings.find((m) => m.FunctionName.Ref === worker)!;
    const [queueId, queue] = queues.find(([id]) => id.startsWith('WebhookDeliveries') && !id.includes('Dead'))!;
    expect(mapping.EventSourceArn).toEqual({ 'Fn::GetAtt': [queueId, 'Arn'] });
    expect(mapping.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    const timeout = functions.find(([id]) => id === worker)![1].Properties.Timeout;
    expect(queue.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(6 * timeout);
    expect(queue.Properties.RedrivePolicy).toMatchObject({ maxReceiveCount: 5 });
    expect(queue.Properties.RedrivePolicy.deadLetterTargetArn['Fn::GetAtt'][0]).toMatch(/^WebhookDeliveryDeadLetters/);
  });

  it('sweeps every minute, and gives the three functions the queue URL', () => {
    const sweep = functionId('webhooks: queue due retries');
    const rule = ofType(resources, 'AWS::Events::Rule').find(([, r]) =>
      r.Properties.Targets.some((t: Json) => t.Arn['Fn::GetAtt']?.[0] === sweep),
    )!;
    expect(rule[1].Properties.ScheduleExpression).toBe('rate(1 minute)');
    for (const description of ['webhooks: stream', 'webhooks: one signed attempt', 'webhooks: queue due retries']) {
      const fn = functions.find(([id]) => id === functionId(description))![1];
      expect(fn.Properties.Environment.Variables.WEBHOOK_QUEUE_URL).toBeDefined();
      expect(fn.Properties.Environment.Variables.WEBHOOK_ALLOW_PRIVATE_URLS).toBe('false');
      expect(fn.Properties.Environment.Variables.WEBHOOK_ALLOW_HTTP).toBe('false');
    }
    expect(Object.values(WEBHOOK_HANDLERS)).toHaveLength(3);
  });

  it('lets only the routes that store endpoint secrets encrypt with the secrets key', () => {
    for (const [route, fn] of stack.routeFunctions) {
      const roleId = stack.getLogicalId(fn.function.role!.node.defaultChild as never);
      const encrypts = statementsOf(resources, roleId).some((statement) =>
        actionsOf(statement).includes('kms:Encrypt'),
      );
      expect(encrypts, `${route.method} ${route.path}`).toBe(route.encryptsSecrets === true);
    }
    expect(routes.filter((route) => route.encryptsSecrets).map((route) => route.path)).toEqual([
      '/webhooks/endpoints',
      '/webhooks/endpoints/{id}/rotate_secret',
    ]);
  });
});
