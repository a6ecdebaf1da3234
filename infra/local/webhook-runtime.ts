import { randomUUID } from 'node:crypto';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  ExpiredIteratorException,
  GetRecordsCommand,
  GetShardIteratorCommand,
  TrimmedDataAccessException,
  type _Record as StreamRecord,
  type ShardIteratorType,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBRecord, DynamoDBStreamEvent, SQSEvent } from 'aws-lambda';
import type { AppContext } from '../../lib/context.js';
import type { DeliveryDeps } from '../../lib/webhooks/deliver-webhook.js';
import { bindDeliveryWorker, bindDispatcher, bindWebhookSweep } from '../../lib/webhooks/handlers.js';
import type { DeliveryMessage, DeliveryQueue } from '../../lib/webhooks/queue.js';
import type { ResolveHost } from '../../lib/webhooks/send-webhook.js';
import { matchesDispatchFilter } from '../../lib/webhooks/stream-records.js';
import type { AwsRequest } from './iam/dynamodb-requests.js';
import { asFunction, asService, authorizeLocal, type LocalIam } from './iam/enforcement.js';

/**
 * The webhook functions' handler modules (infra/webhooks.ts `WEBHOOK_HANDLERS`): each runs here under its
 * function's deployed role (test/infra/local-iam.test.ts holds the two lists together).
 */
export const LOCAL_WEBHOOK_HANDLERS = {
  dispatcher: 'functions/webhooks/dispatch-events.ts',
  delivery: 'functions/webhooks/deliver-webhooks.ts',
  sweep: 'functions/webhooks/sweep-webhooks.ts',
} as const;

/**
 * Webhooks under `npm start` (and in tests), running the same dispatcher, worker and sweep functions as the
 * Lambdas: a poller reads DynamoDB Local's stream and hands Lambda-shaped records to the dispatcher; an
 * in-process queue (timers for SQS's delay, re-delivery of failed messages like a visibility timeout) feeds
 * the worker; an interval runs the sweep.
 */
/**
 * What Lambda's event source mapping does under the function's own role before it invokes it with a batch:
 * read the table's stream (the dispatcher), receive and delete the queue's messages (the delivery worker).
 */
const STREAM_READS = (iam: LocalIam) =>
  ['dynamodb:DescribeStream', 'dynamodb:GetShardIterator', 'dynamodb:GetRecords'].map((action) => ({
    action,
    resource: iam.resources.mainTableStream,
  }));
const QUEUE_READS = (iam: LocalIam) =>
  ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'].map((action) => ({
    action,
    resource: iam.resources.webhookDeliveries,
  }));

/** `handler` invoked only once its function's role allows the event source's reads (run inside `asFunction`). */
function readingFirst<E, R>(
  ctx: AppContext,
  reads: (iam: LocalIam) => AwsRequest[],
  handler: (event: E) => Promise<R>,
): (event: E) => Promise<R> {
  return async (event) => {
    await authorizeLocal(ctx, reads);
    return handler(event);
  };
}

export interface LocalWebhookOptions {
  /** Tests resolve names themselves (no DNS). */
  resolve?: ResolveHost;
  random?: () => number;
  pollIntervalMs?: number;
  sweepIntervalMs?: number;
  /** Deliveries in flight at once; a hanging receiver holds one slot for at most the send timeout. */
  concurrency?: number;
  /**
   * Dispatch from the stream only the events of the platforms this accepts (default: all). Test files share
   * one database: a file's runtime must not deliver another file's events before that file means it to.
   */
  acceptsPlatform?: (platformCode: string) => boolean;
  /**
   * Wraps the dispatcher and the delivery worker as the runtime calls them (the seeded simulation injects
   * stream records delivered twice and crashes there); `npm start` passes none.
   */
  wrapDispatcher?: (dispatch: StreamDispatcher) => StreamDispatcher;
  wrapWorker?: (work: DeliveryWorker) => DeliveryWorker;
}

export type StreamDispatcher = ReturnType<typeof bindDispatcher>;
export type DeliveryWorker = ReturnType<typeof bindDeliveryWorker>;

export interface LocalWebhooks {
  queue: DeliveryQueue;
  /** Runs the sweep now (tests: after moving the clock). */
  sweep(): Promise<{ events: number; deliveries: number }>;
  stop(): Promise<void>;
}

/** A failed message is offered again after this (SQS: the visibility timeout), up to `MAX_RECEIVES` times. */
const REDELIVERY_DELAY_MS = 2_000;
const MAX_RECEIVES = 5;

export async function startLocalWebhooks(ctx: AppContext, options: LocalWebhookOptions = {}): Promise<LocalWebhooks> {
  const life = new Lifecycle();
  const queue = startDeliveryQueue(ctx, options, life);
  const boundDispatcher = asFunction(
    LOCAL_WEBHOOK_HANDLERS.dispatcher,
    readingFirst(ctx, STREAM_READS, bindDispatcher(ctx, queue)),
  );
  const dispatcher = options.wrapDispatcher ? options.wrapDispatcher(boundDispatcher) : boundDispatcher;
  const poller = await startStreamPoller(ctx, dispatcher, options, life);

  // ---- schedule -> sweep ----
  const sweeper = asFunction(LOCAL_WEBHOOK_HANDLERS.sweep, bindWebhookSweep(ctx, queue));
  let sweeping: Promise<{ events: number; deliveries: number }> | undefined;
  const sweep = () => (sweeping ??= life.track(sweeper()).finally(() => (sweeping = undefined)));
  const sweepInterval = setInterval(() => void sweep().catch(() => undefined), options.sweepIntervalMs ?? 5_000);

  return {
    queue,
    sweep,
    async stop() {
      clearInterval(sweepInterval);
      await life.stop();
      poller.close();
    },
  };
}

/** The timers and promises the runtimes start, so `stop` can cancel the first and wait for the second. */
class Lifecycle {
  stopped = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly running = new Set<Promise<unknown>>();

  track<T>(promise: Promise<T>): Promise<T> {
    this.running.add(promise);
    void promise.finally(() => this.running.delete(promise)).catch(() => undefined);
    return promise;
  }

  /** Runs `run` after `ms` unless stopped by then. */
  later(ms: number, run: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.stopped) run();
    }, ms);
    this.timers.add(timer);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await Promise.allSettled([...this.running]);
  }
}

/**
 * SQS in process: a message sent with a delay waits on a timer, then the worker takes it (`concurrency` at
 * once); a failed one is offered again after the visibility delay, `MAX_RECEIVES` times at most.
 */
function startDeliveryQueue(ctx: AppContext, options: LocalWebhookOptions, life: Lifecycle): DeliveryQueue {
  const concurrency = options.concurrency ?? 64;
  const waiting: { message: DeliveryMessage; receives: number }[] = [];
  let active = 0;
  const queue: DeliveryQueue = {
    // SendMessage under the sending function's role; the queue then holds the message on its own behalf.
    async send(messages, delaySeconds = 0) {
      await authorizeLocal(ctx, (iam) => [{ action: 'sqs:SendMessage', resource: iam.resources.webhookDeliveries }]);
      asService(() => {
        for (const message of messages)
          life.later(Math.max(0, delaySeconds * 1000), () => enqueue({ message, receives: 0 }));
      });
    },
  };
  const deps: DeliveryDeps = { queue, resolve: options.resolve, random: options.random };
  const boundWorker = asFunction(
    LOCAL_WEBHOOK_HANDLERS.delivery,
    readingFirst(ctx, QUEUE_READS, bindDeliveryWorker(ctx, deps)),
  );
  const worker = options.wrapWorker ? options.wrapWorker(boundWorker) : boundWorker;
  const enqueue = (entry: { message: DeliveryMessage; receives: number }) => {
    waiting.push(entry);
    pump();
  };
  const pump = () => {
    while (!life.stopped && active < concurrency && waiting.length > 0) {
      const entry = waiting.shift()!;
      active++;
      const event: SQSEvent = { Records: [sqsRecord(entry.message)] };
      life.track(
        worker(event)
          .then((response) => response.batchItemFailures.length > 0)
          .catch((error) => {
            ctx.logger.error('webhook delivery failed', { error: String(error) });
            return true;
          })
          .then((failed) => {
            if (failed && entry.receives + 1 < MAX_RECEIVES)
              life.later(REDELIVERY_DELAY_MS, () => enqueue({ ...entry, receives: entry.receives + 1 }));
          })
          .finally(() => {
            active--;
            pump();
          }),
      );
    }
  };
  return queue;
}

interface ShardState {
  iterator: string | undefined;
  checkpoint: string | undefined;
  failures: number;
}

/**
 * Lambda's DynamoDB stream event source in process: reads every shard of the main table's stream, hands the
 * records that pass the dispatch filter to the dispatcher as Lambda would (a failed batch is read again from
 * its first failed record, `MAX_RECEIVES` times), and polls again at once while a shard has records.
 */
async function startStreamPoller(
  ctx: AppContext,
  dispatcher: StreamDispatcher,
  options: LocalWebhookOptions,
  life: Lifecycle,
): Promise<{ close(): void }> {
  const { tables, stream } = await openMainTableStream(ctx);
  const shards = new Map<string, ShardState>();
  await discoverShards(stream, shards, true);

  let polls = 0;
  const poll = async () => {
    if (life.stopped) return;
    let busy = false;
    try {
      if (++polls % 50 === 0) await discoverShards(stream, shards, false);
      const batches = [...shards].map(([id, state]) => pollShard(stream, id, state, dispatcher, options));
      busy = (await Promise.all(batches)).some(Boolean);
    } catch (error) {
      ctx.logger.warn('stream poll failed', { error: String(error) });
    }
    // A shard that had records is read again at once (records written while the batch was dispatched wait
    // otherwise); an idle stream is polled at the interval.
    life.later(busy ? 0 : (options.pollIntervalMs ?? 100), () => void life.track(poll()));
  };
  void life.track(poll());

  return {
    close() {
      tables.destroy();
      stream.client.destroy();
    },
  };
}

/** The main table's stream and the client that reads it. */
interface TableStream {
  client: DynamoDBStreamsClient;
  arn: string;
}

/** Clients for DynamoDB Local and the main table's stream; fails with what to do when the table has none. */
async function openMainTableStream(ctx: AppContext): Promise<{ tables: DynamoDBClient; stream: TableStream }> {
  const endpoint = ctx.config.DYNAMODB_ENDPOINT;
  if (!endpoint) throw new Error('the local webhook runtime needs DYNAMODB_ENDPOINT (DynamoDB Local)');
  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  const tables = new DynamoDBClient({ endpoint, region: ctx.config.AWS_REGION, credentials });
  const streams = new DynamoDBStreamsClient({ endpoint, region: ctx.config.AWS_REGION, credentials });
  const described = await tables.send(new DescribeTableCommand({ TableName: ctx.tables.main }));
  const streamArn = described.Table?.LatestStreamArn;
  if (!streamArn)
    throw new Error(`table ${ctx.tables.main} has no stream; recreate it (npm start upgrades it) or enable its stream`);
  return { tables, stream: { client: streams, arn: streamArn } };
}

async function shardIterator(
  stream: TableStream,
  shardId: string,
  type: ShardIteratorType,
  sequence?: string,
): Promise<string | undefined> {
  const out = await stream.client.send(
    new GetShardIteratorCommand({
      StreamArn: stream.arn,
      ShardId: shardId,
      ShardIteratorType: type,
      SequenceNumber: sequence,
    }),
  );
  return out.ShardIterator;
}

/**
 * Adds the stream's shards not yet in `shards`. Shards open when we start are read from now on (what came
 * before is the sweep's); later shards from their start.
 */
async function discoverShards(stream: TableStream, shards: Map<string, ShardState>, initial: boolean): Promise<void> {
  let ExclusiveStartShardId: string | undefined;
  do {
    const out = await stream.client.send(new DescribeStreamCommand({ StreamArn: stream.arn, ExclusiveStartShardId }));
    for (const shard of out.StreamDescription?.Shards ?? []) {
      const id = shard.ShardId!;
      if (shards.has(id)) continue;
      const open = shard.SequenceNumberRange?.EndingSequenceNumber === undefined;
      if (initial && !open) {
        shards.set(id, { iterator: undefined, checkpoint: undefined, failures: 0 });
        continue;
      }
      shards.set(id, {
        iterator: await shardIterator(stream, id, initial ? 'LATEST' : 'TRIM_HORIZON'),
        checkpoint: undefined,
        failures: 0,
      });
    }
    ExclusiveStartShardId = out.StreamDescription?.LastEvaluatedShardId;
  } while (ExclusiveStartShardId);
}

/** Reads one batch of the shard and dispatches it; true when the batch had records (more may be waiting). */
async function pollShard(
  stream: TableStream,
  shardId: string,
  state: ShardState,
  dispatcher: StreamDispatcher,
  options: LocalWebhookOptions,
): Promise<boolean> {
  if (!state.iterator) return false;
  let out;
  try {
    out = await stream.client.send(new GetRecordsCommand({ ShardIterator: state.iterator, Limit: 1000 }));
  } catch (error) {
    if (error instanceof ExpiredIteratorException || error instanceof TrimmedDataAccessException) {
      state.iterator = state.checkpoint
        ? await shardIterator(stream, shardId, 'AFTER_SEQUENCE_NUMBER', state.checkpoint)
        : await shardIterator(stream, shardId, 'LATEST');
      return false;
    }
    throw error;
  }
  const accepts = options.acceptsPlatform;
  const records = (out.Records ?? [])
    .map((record) => lambdaRecord(record, stream.arn))
    .filter(matchesDispatchFilter)
    .filter((record) => !accepts || accepts(String(record.dynamodb?.NewImage?.platform_code?.S ?? '')));
  if (records.length > 0) {
    const event: DynamoDBStreamEvent = { Records: records };
    const response = await dispatcher(event).catch(() => ({
      batchItemFailures: [{ itemIdentifier: records[0]!.dynamodb!.SequenceNumber! }],
    }));
    const failed = response.batchItemFailures.map((failure) => failure.itemIdentifier).sort(compareSequence)[0];
    if (failed !== undefined && state.failures < MAX_RECEIVES) {
      // Like Lambda: resume at the first failed record (later ones are dispatched again, harmlessly).
      state.failures++;
      state.iterator = await shardIterator(stream, shardId, 'AT_SEQUENCE_NUMBER', failed);
      return false;
    }
  }
  state.failures = 0;
  const last = out.Records?.at(-1)?.dynamodb?.SequenceNumber;
  if (last) state.checkpoint = last;
  state.iterator = out.NextShardIterator;
  return (out.Records?.length ?? 0) > 0;
}

function compareSequence(a: string, b: string): number {
  return BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0;
}

/** A stream record as Lambda hands it over (creation time in seconds, the event source fields). */
function lambdaRecord(record: StreamRecord, streamArn: string): DynamoDBRecord {
  const data = record.dynamodb ?? {};
  return {
    eventID: record.eventID,
    eventName: record.eventName as DynamoDBRecord['eventName'],
    eventVersion: record.eventVersion,
    eventSource: 'aws:dynamodb',
    awsRegion: record.awsRegion,
    eventSourceARN: streamArn,
    dynamodb: {
      ApproximateCreationDateTime: data.ApproximateCreationDateTime
        ? Math.floor(data.ApproximateCreationDateTime.getTime() / 1000)
        : undefined,
      Keys: data.Keys as never,
      NewImage: data.NewImage as never,
      OldImage: data.OldImage as never,
      SequenceNumber: data.SequenceNumber,
      SizeBytes: data.SizeBytes,
      StreamViewType: data.StreamViewType as never,
    },
  };
}

function sqsRecord(message: DeliveryMessage): SQSEvent['Records'][number] {
  return {
    messageId: randomUUID(),
    receiptHandle: 'local',
    body: JSON.stringify(message),
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: String(Date.now()),
      SenderId: 'local',
      ApproximateFirstReceiveTimestamp: String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:local:000000000000:webhook-deliveries',
    awsRegion: 'local',
  };
}
