import { createHash, randomUUID } from 'node:crypto';
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
import { DISPATCH_STREAM_SOURCE, matchesDispatchFilter } from '../../lib/webhooks/stream-records.js';
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
  /** How long an idle stream waits before it is read again, and a failed stream batch before its retry. */
  pollIntervalMs?: number;
  /** Records per dispatcher batch and batches dispatched at once (default: as deployed, `DISPATCH_STREAM_SOURCE`). */
  batchSize?: number;
  parallelization?: number;
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
  /** The last record read from the shard: an expired iterator resumes after it. */
  checkpoint: string | undefined;
}

/**
 * Lambda's DynamoDB stream event source in process: reads every shard of the main table's stream and hands the
 * records that pass the dispatch filter to the dispatcher as Lambda would, in batches of up to `batchSize`,
 * `parallelization` batches at once (each record in the lane of its key, one batch at a time per lane; a failed
 * batch is dispatched again from its first failed record, `MAX_RECEIVES` times). Reading goes on while lanes
 * dispatch, up to `batchSize` records waiting per lane; a shard that had records is read again at once, an idle
 * stream at the poll interval.
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

  const pollIntervalMs = options.pollIntervalMs ?? 100;
  const batchSize = options.batchSize ?? DISPATCH_STREAM_SOURCE.batchSize;
  const lanes = Array.from(
    { length: options.parallelization ?? DISPATCH_STREAM_SOURCE.parallelizationFactor },
    () => new DispatchLane(ctx, dispatcher, batchSize, pollIntervalMs, life, () => resume()),
  );
  const full = () => lanes.some((lane) => lane.waiting >= batchSize);
  // Reading waits while a lane is full (a slow dispatcher holds the stream back, as Lambda's does); the lane
  // resumes it once it has taken a batch.
  let parked = false;
  const resume = () => {
    if (!parked || full()) return;
    parked = false;
    void life.track(poll());
  };

  let polls = 0;
  const poll = async () => {
    if (life.stopped) return;
    if (full()) {
      parked = true;
      return;
    }
    let busy = false;
    try {
      if (++polls % 50 === 0) await discoverShards(stream, shards, false);
      const read = await Promise.all([...shards].map(([id, state]) => readShard(stream, id, state)));
      busy = read.some((records) => records.length > 0);
      const accepts = options.acceptsPlatform;
      for (const record of read.flat()) {
        if (!matchesDispatchFilter(record)) continue;
        if (accepts && !accepts(String(record.dynamodb?.NewImage?.platform_code?.S ?? ''))) continue;
        lanes[laneOf(record, lanes.length)]!.add(record);
      }
    } catch (error) {
      ctx.logger.warn('stream poll failed', { error: String(error) });
    }
    life.later(busy ? 0 : pollIntervalMs, () => void life.track(poll()));
  };
  void life.track(poll());

  return {
    close() {
      tables.destroy();
      stream.client.destroy();
    },
  };
}

/** A record's lane: by a hash of its keys, as Lambda spreads a shard's records over its concurrent batches. */
function laneOf(record: DynamoDBRecord, lanes: number): number {
  const keys = JSON.stringify(record.dynamodb?.Keys ?? {});
  return createHash('sha1').update(keys).digest().readUInt32BE(0) % lanes;
}

/**
 * One of a shard's concurrent batches: records wait in order and are dispatched `batchSize` at a time, each
 * batch after the one before has finished. A batch that fails is dispatched again from its first failed
 * record (later ones again too, harmlessly: a delivery is a conditional put), after `retryDelayMs`, up to
 * `MAX_RECEIVES` times; then it is left to the sweep, which dispatches every event not marked dispatched.
 */
class DispatchLane {
  private readonly queue: DynamoDBRecord[] = [];
  private draining: Promise<void> | undefined;

  constructor(
    private readonly ctx: AppContext,
    private readonly dispatcher: StreamDispatcher,
    private readonly batchSize: number,
    private readonly retryDelayMs: number,
    private readonly life: Lifecycle,
    private readonly tookBatch: () => void,
  ) {}

  get waiting(): number {
    return this.queue.length;
  }

  add(record: DynamoDBRecord): void {
    this.queue.push(record);
    this.drain();
  }

  private drain(): void {
    if (this.draining) return;
    this.draining = this.life.track(this.dispatchWaiting()).finally(() => {
      this.draining = undefined;
      if (this.queue.length > 0 && !this.life.stopped) this.drain();
    });
  }

  /** Dispatches what waits, batch by batch; a runtime stopping finishes the batch it is on. */
  private async dispatchWaiting(): Promise<void> {
    while (this.queue.length > 0 && !this.life.stopped) {
      const batch = this.queue.splice(0, this.batchSize);
      this.tookBatch();
      await this.dispatchBatch(batch);
    }
  }

  private async dispatchBatch(batch: DynamoDBRecord[]): Promise<void> {
    let records = batch;
    for (let receives = 1; ; receives++) {
      const event: DynamoDBStreamEvent = { Records: records };
      const response = await this.dispatcher(event).catch(() => ({
        batchItemFailures: [{ itemIdentifier: records[0]!.dynamodb!.SequenceNumber! }],
      }));
      const failed = response.batchItemFailures.map((failure) => failure.itemIdentifier).sort(compareSequence)[0];
      if (failed === undefined) return;
      if (receives >= MAX_RECEIVES || this.life.stopped) {
        this.ctx.logger.warn('stream batch not dispatched; the sweep will', { records: records.length });
        return;
      }
      // Like Lambda: again from the first failed record.
      records = records.filter((record) => compareSequence(record.dynamodb!.SequenceNumber!, failed) >= 0);
      await new Promise((resolve) => setTimeout(resolve, this.retryDelayMs));
    }
  }
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
        shards.set(id, { iterator: undefined, checkpoint: undefined });
        continue;
      }
      shards.set(id, {
        iterator: await shardIterator(stream, id, initial ? 'LATEST' : 'TRIM_HORIZON'),
        checkpoint: undefined,
      });
    }
    ExclusiveStartShardId = out.StreamDescription?.LastEvaluatedShardId;
  } while (ExclusiveStartShardId);
}

/** Reads what the shard holds next (up to GetRecords' 1,000 records), as Lambda-shaped records. */
async function readShard(stream: TableStream, shardId: string, state: ShardState): Promise<DynamoDBRecord[]> {
  if (!state.iterator) return [];
  let out;
  try {
    out = await stream.client.send(new GetRecordsCommand({ ShardIterator: state.iterator, Limit: 1000 }));
  } catch (error) {
    if (error instanceof ExpiredIteratorException || error instanceof TrimmedDataAccessException) {
      state.iterator = state.checkpoint
        ? await shardIterator(stream, shardId, 'AFTER_SEQUENCE_NUMBER', state.checkpoint)
        : await shardIterator(stream, shardId, 'LATEST');
      return [];
    }
    throw error;
  }
  const last = out.Records?.at(-1)?.dynamodb?.SequenceNumber;
  if (last) state.checkpoint = last;
  state.iterator = out.NextShardIterator;
  return (out.Records ?? []).map((record) => lambdaRecord(record, stream.arn));
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
