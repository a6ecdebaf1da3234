import { CfnOutput, Duration } from 'aws-cdk-lib';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { MAIN_TABLE } from '../lib/store/table/tables.js';
import { API_FUNCTION_TIMEOUT, type ServiceFunction } from './service-function.js';
import { grantBookingQueue, grantTable, RESERVED_CONCURRENCY, type StackBase } from './stack-base.js';

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
export const EVENT_DEAD_LETTER_RUNBOOK: Record<keyof typeof EVENT_HANDLERS, string> = {
  BankEvents:
    "Each message is a bank payment event that failed 5 times (the function's errors are in its log group). " +
    'Fix the cause, then redrive the queue to its source queue (SQS console: Start DLQ redrive): applying an event twice is harmless.',
  CustodyEvents:
    "Each message is a custody withdrawal outcome that failed 5 times (the function's errors are in its log group). " +
    'Fix the cause, then redrive the queue to its source queue (SQS console: Start DLQ redrive): applying an event twice is harmless.',
};

/** Deliveries of one event before it moves to the dead-letter queue. */
const EVENT_MAX_RECEIVES = 5;

export interface EventConsumers {
  /** The function of each event handler, by its id in `EVENT_HANDLERS`. */
  functions: Map<string, ServiceFunction>;
  /** The queue each function consumes, by the same id; the integrations (and the ops CLI) send to it. */
  queues: Map<string, { queue: Queue; deadLetters: Queue }>;
}

/** One function per event handler; they move balances, so main-table access only. */
export function addEventConsumers(base: StackBase): EventConsumers {
  const { stack } = base;
  const functions = new Map<string, ServiceFunction>();
  const queues = new Map<string, { queue: Queue; deadLetters: Queue }>();
  for (const [id, handler] of Object.entries(EVENT_HANDLERS)) {
    const fn = base.addFunction(id, 'applies bank or custody events', {
      handler,
      description: `events: ${handler}`,
      environment: base.environment,
      reservedConcurrentExecutions: RESERVED_CONCURRENCY.eventConsumer,
    });
    grantTable(fn.function, base.mainTable, MAIN_TABLE, 'write');
    // Both book (a posted payment, a confirmed or failed withdrawal) through the group-commit engine.
    grantBookingQueue(fn.function, base.mainTable);
    functions.set(id, fn);

    // FIFO, grouped by payment or withdrawal: a resource's events are applied in the order sent (a `posted`
    // overtaking its `pending` would be refused as an illegal move and lost). Content-based deduplication
    // drops a repeat sent within 5 minutes; later repeats are no-ops anyway.
    const deadLetters = new Queue(stack, `${id}DeadLetters`, {
      fifo: true,
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    const queue = new Queue(stack, `${id}Queue`, {
      fifo: true,
      contentBasedDeduplication: true,
      // AWS's advice for Lambda consumers: at least six times the function's timeout.
      visibilityTimeout: Duration.seconds(6 * API_FUNCTION_TIMEOUT.toSeconds()),
      retentionPeriod: Duration.days(14),
      deadLetterQueue: { queue: deadLetters, maxReceiveCount: EVENT_MAX_RECEIVES },
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    // A FIFO mapping scales with the queue's message groups, whatever the function's reserved concurrency:
    // past it, batches are throttled and return with their receive count raised, and after EVENT_MAX_RECEIVES
    // an event lands in the dead-letter queue unapplied. Capped at the reservation, the mapping never exceeds it.
    fn.function.addEventSource(
      new SqsEventSource(queue, {
        batchSize: 10,
        reportBatchItemFailures: true,
        maxConcurrency: RESERVED_CONCURRENCY.eventConsumer,
      }),
    );
    queues.set(id, { queue, deadLetters });
    new CfnOutput(stack, `${id}QueueUrl`, { value: queue.queueUrl });
    new CfnOutput(stack, `${id}FunctionName`, { value: fn.function.functionName });
  }
  return { functions, queues };
}
