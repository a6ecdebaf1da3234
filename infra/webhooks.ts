import { Duration, Validations } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { FilterCriteria, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { MAIN_TABLE } from '../lib/store/table/tables.js';
import { DISPATCH_FILTER_PATTERN, DISPATCH_STREAM_SOURCE } from '../lib/webhooks/stream-records.js';
import type { ServiceEnvironment } from './service-function.js';
import { grantTable, RESERVED_CONCURRENCY, type StackBase } from './stack-base.js';

/** The webhook functions: stream dispatcher, queue worker, scheduled sweep. */
export const WEBHOOK_HANDLERS = {
  dispatcher: 'functions/webhooks/dispatch-events.ts',
  delivery: 'functions/webhooks/deliver-webhooks.ts',
  sweep: 'functions/webhooks/sweep-webhooks.ts',
} as const;

/** A delivery attempt takes at most the 15-second send plus a few reads and writes. */
const WEBHOOK_DELIVERY_TIMEOUT = Duration.seconds(60);

/**
 * Webhooks: the table's stream, filtered to event inserts, feeds a dispatcher that makes
 * one delivery per subscribed endpoint and queues it; a worker on the queue claims, signs and posts each
 * attempt and queues the next within SQS's 15-minute delay; a sweep every minute drains later retries and
 * dispatches what the stream missed. Failed stream batches go to an on-failure queue and poisoned delivery
 * messages to a dead-letter queue, both alarmed.
 */
export function addWebhooks(base: StackBase) {
  const { deliveries, deliveryDeadLetters, dispatchFailures } = addWebhookQueues(base);
  const environment: ServiceEnvironment = { ...base.environment, WEBHOOK_QUEUE_URL: deliveries.queueUrl };
  // Added in this order: the throttle alarms group functions, and the dashboard lists them, in the order added.
  const dispatcher = addDispatcher(base, environment, deliveries, dispatchFailures);
  const worker = addDeliveryWorker(base, environment, deliveries);
  const { sweep, sweepDeadLetters } = addWebhookSweep(base, environment, deliveries);
  letRoutesEncryptEndpointSecrets(base);
  return { deliveries, deliveryDeadLetters, dispatchFailures, sweepDeadLetters, dispatcher, worker, sweep };
}

/** Every webhook queue keeps messages two weeks (unless it says otherwise), encrypted, over TLS only. */
const WEBHOOK_QUEUE_PROPS = {
  retentionPeriod: Duration.days(14),
  encryption: QueueEncryption.SQS_MANAGED,
  enforceSSL: true,
};

/** The delivery queue with its dead-letter queue, and the dispatcher's on-failure queue. */
function addWebhookQueues({ stack }: StackBase) {
  const deliveryDeadLetters = new Queue(stack, 'WebhookDeliveryDeadLetters', WEBHOOK_QUEUE_PROPS);
  const dispatchFailures = new Queue(stack, 'WebhookDispatchFailures', WEBHOOK_QUEUE_PROPS);
  const deliveries = new Queue(stack, 'WebhookDeliveries', {
    ...WEBHOOK_QUEUE_PROPS,
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
  return { deliveries, deliveryDeadLetters, dispatchFailures };
}

/** The dispatcher on the table's stream, filtered to event inserts: one queued delivery per subscribed endpoint. */
function addDispatcher(base: StackBase, environment: ServiceEnvironment, deliveries: Queue, dispatchFailures: Queue) {
  const dispatcher = base.addFunction('WebhookDispatcher', 'fans events out into webhook deliveries', {
    handler: WEBHOOK_HANDLERS.dispatcher,
    description: 'webhooks: stream -> one delivery per subscribed endpoint',
    environment,
    timeout: Duration.seconds(60),
    reservedConcurrentExecutions: RESERVED_CONCURRENCY.webhookDispatcher,
  });
  grantTable(dispatcher.function, base.mainTable, MAIN_TABLE, 'write');
  deliveries.grantSendMessages(dispatcher.function);
  dispatcher.function.addEventSource(
    new DynamoEventSource(base.mainTable, {
      startingPosition: StartingPosition.TRIM_HORIZON,
      // The local poller reads with the same settings (infra/local/webhook-runtime.ts). No batching window: a
      // busy stream fills batches anyway, and on a quiet one the window was a wait added to every event.
      batchSize: DISPATCH_STREAM_SOURCE.batchSize,
      parallelizationFactor: DISPATCH_STREAM_SOURCE.parallelizationFactor,
      bisectBatchOnError: true,
      reportBatchItemFailures: true,
      retryAttempts: 10,
      // The sweep dispatches whatever is given up on, so a poisoned record never blocks the shard for a day.
      maxRecordAge: Duration.hours(6),
      onFailure: new SqsDlq(dispatchFailures),
      filters: [FilterCriteria.filter(DISPATCH_FILTER_PATTERN)],
    }),
  );
  return dispatcher;
}

/** The worker on the delivery queue: claims, signs and posts one attempt, and queues the next. */
function addDeliveryWorker(base: StackBase, environment: ServiceEnvironment, deliveries: Queue) {
  const worker = base.addFunction('WebhookDelivery', 'delivers webhooks', {
    handler: WEBHOOK_HANDLERS.delivery,
    description: 'webhooks: one signed attempt per queued delivery',
    environment,
    timeout: WEBHOOK_DELIVERY_TIMEOUT,
    reservedConcurrentExecutions: RESERVED_CONCURRENCY.webhookDelivery,
  });
  grantTable(worker.function, base.mainTable, MAIN_TABLE, 'write');
  deliveries.grantSendMessages(worker.function);
  // Endpoint secrets are encrypted like API secrets; the worker decrypts them to sign.
  base.secretsKey.grantDecrypt(worker.function);
  worker.function.addEventSource(
    // At most the reservation: a mapping above it would have its batches throttled back to the queue.
    new SqsEventSource(deliveries, {
      batchSize: 10,
      reportBatchItemFailures: true,
      maxConcurrency: RESERVED_CONCURRENCY.webhookDelivery,
    }),
  );
  return worker;
}

/** The sweep every minute: queues retries due beyond SQS's 15-minute delay and dispatches what the stream missed. */
function addWebhookSweep(base: StackBase, environment: ServiceEnvironment, deliveries: Queue) {
  const { stack } = base;
  // Invoked asynchronously by the schedule: a run that fails after retries is kept and alarmed on.
  const sweepDeadLetters = new Queue(stack, 'WebhookSweepDeadLetters', WEBHOOK_QUEUE_PROPS);
  const sweep = base.addFunction('WebhookSweep', 'the scheduled webhook sweep', {
    handler: WEBHOOK_HANDLERS.sweep,
    description: 'webhooks: queue due retries, dispatch events the stream missed',
    environment,
    timeout: Duration.minutes(5),
    deadLetterQueue: sweepDeadLetters,
    reservedConcurrentExecutions: RESERVED_CONCURRENCY.webhookSweep,
  });
  grantTable(sweep.function, base.mainTable, MAIN_TABLE, 'write');
  deliveries.grantSendMessages(sweep.function);
  new Rule(stack, 'WebhookSweepSchedule', {
    schedule: Schedule.rate(Duration.minutes(1)),
    targets: [new LambdaFunction(sweep.function, { deadLetterQueue: sweepDeadLetters, retryAttempts: 2 })],
  });
  return { sweep, sweepDeadLetters };
}

/** Creating an endpoint or rotating its secret encrypts the new secret. */
function letRoutesEncryptEndpointSecrets(base: StackBase): void {
  for (const [route, fn] of base.routeFunctions) {
    // kms:Encrypt alone (grantEncrypt would add ReEncrypt* and GenerateDataKey*, which nothing here calls).
    if (route.encryptsSecrets)
      fn.function.addToRolePolicy(
        new PolicyStatement({ actions: ['kms:Encrypt'], resources: [base.secretsKey.keyArn] }),
      );
  }
}
