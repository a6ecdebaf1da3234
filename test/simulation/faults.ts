import { AsyncLocalStorage } from 'node:async_hooks';
import {
  ProvisionedThroughputExceededException,
  TransactionCanceledException,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { DeliveryWorker, StreamDispatcher } from '../../infra/local/webhook-runtime.js';
import { dropResponse, lostAnswer } from '../support/raw-response.js';
import { keyedDraw } from './prng.js';

/**
 * The seeded fault injector: an AWS SDK middleware on the simulation's DynamoDB client,
 * and wrappers the local runtimes take as injected dependencies (the webhook runtime's dispatcher and
 * worker, the bank and custody queue consumers). Every decision is `keyedDraw(seed, place)`, so a seed
 * replays the same faults at the same places; every fault injected is logged with where it fell.
 */

export type FaultKind =
  | 'conflict'
  | 'throttle'
  | 'lost_response'
  | 'crash_before_write'
  | 'crash_after_commit'
  | 'stream_duplicate'
  | 'dispatch_crash'
  | 'delivery_crash'
  | 'queue_redelivery'
  | 'queue_crash'
  | 'queue_concurrent';

export interface InjectedFault {
  kind: FaultKind;
  /** Where: `op 12 try 2` (a client request), or a runtime (`background`, `webhook delivery`, ...). */
  scope: string;
  /** The operation it fell in, when it fell in one. */
  op: number | undefined;
  /** The DynamoDB command, or the runtime step. */
  at: string;
}

/** Rates per SDK attempt (DynamoDB calls) and per runtime step, while faults are on. */
export interface FaultRates {
  conflict: number;
  throttle: number;
  lostResponse: number;
  crashBeforeWrite: number;
  crashAfterCommit: number;
  streamDuplicate: number;
  dispatchCrash: number;
  deliveryCrash: number;
  queueRedelivery: number;
  queueCrash: number;
  /** A message received by two consumers at once (its visibility timeout ran out while the first still worked). */
  queueConcurrent: number;
}

export const DEFAULT_FAULT_RATES: FaultRates = {
  conflict: 0.04,
  throttle: 0.01,
  lostResponse: 0.03,
  crashBeforeWrite: 0.006,
  crashAfterCommit: 0.006,
  streamDuplicate: 0.1,
  dispatchCrash: 0.03,
  deliveryCrash: 0.03,
  queueRedelivery: 0.15,
  queueCrash: 0.05,
  queueConcurrent: 0.25,
};

/** Where DynamoDB calls are counted: one request attempt of an operation, or a runtime. */
interface Scope {
  name: string;
  op: number | undefined;
  calls: number;
}

/** What a crash looks like to the code that called DynamoDB: the process is gone, nothing answers. */
export class SimulatedCrash extends Error {
  constructor(where: string) {
    super(`simulated crash ${where}`);
    this.name = 'SimulatedCrash';
  }
}

type Middleware = Parameters<DynamoDBClient['middlewareStack']['add']>[0];

/**
 * Writes whose answer may be lost. Not PutItem: the request's idempotency claim and the signature replay
 * cache are conditional puts that don't recognise their own resent put (the SDK's retry finds the item and
 * answers "in progress" / "already received"), which holds the id for its 60-s lease: a liveness gap noted
 * here, left to the owners of those files.
 */
const LOSABLE = new Set(['TransactWriteItemsCommand', 'UpdateItemCommand']);

export class FaultInjector {
  readonly log: InjectedFault[] = [];
  /** What the service logged as an error, by scope: a violation prints the server's own account of its 5xx. */
  private readonly errors: Array<{ scope: string; line: string }> = [];
  private readonly scopes = new AsyncLocalStorage<Scope>();
  /** Runtime scopes (no operation): calls counted per runtime. */
  private readonly background = new Map<string, Scope>();
  private readonly onceKeys = new Map<string, number>();
  active = true;

  constructor(
    readonly seed: number,
    readonly rates: FaultRates = DEFAULT_FAULT_RATES,
  ) {}

  /** Runs `work` with its DynamoDB calls counted (and faulted) as operation `op`'s request `attempt`. */
  inOperation<T>(op: number, attempt: number, work: () => Promise<T>): Promise<T> {
    return this.scopes.run({ name: `op ${op} try ${attempt}`, op, calls: 0 }, work);
  }

  /** Faults injected in operation `op` (any of its attempts). */
  faultsOf(op: number, attempt?: number): InjectedFault[] {
    const scope = attempt === undefined ? undefined : `op ${op} try ${attempt}`;
    return this.log.filter((fault) => fault.op === op && (scope === undefined || fault.scope === scope));
  }

  /** Notes an error line the service logged, under the current operation's attempt (or the runtime's). */
  noteError(line: string): void {
    this.errors.push({ scope: this.scopes.getStore()?.name ?? 'background', line });
  }

  /** The error lines the service logged while answering operation `op`'s request `attempt`. */
  errorsOf(op: number, attempt: number): string[] {
    const scope = `op ${op} try ${attempt}`;
    return this.errors.filter((entry) => entry.scope === scope).map((entry) => entry.line);
  }

  countsByKind(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const fault of this.log) counts[fault.kind] = (counts[fault.kind] ?? 0) + 1;
    return counts;
  }

  /** The next place in the current scope (an operation's attempt, or the named runtime). */
  private place(runtime: string): { scope: Scope; key: string } {
    let scope = this.scopes.getStore();
    if (!scope) {
      scope = this.background.get(runtime) ?? { name: runtime, op: undefined, calls: 0 };
      this.background.set(runtime, scope);
    }
    scope.calls += 1;
    return { scope, key: `${scope.name}#${scope.calls}` };
  }

  private draw(key: string, what: string): number {
    return keyedDraw(this.seed, `${key}:${what}`);
  }

  private record(kind: FaultKind, scope: Scope, at: string): void {
    this.log.push({ kind, scope: scope.name, op: scope.op, at });
  }

  /**
   * The SDK middleware (step `deserialize`: inside the SDK's retry loop, so it sees every attempt). A
   * conflict or throttling cancels a transaction before it is sent; throttling refuses any other call; a lost
   * answer lets the write commit and then times out, so the SDK sends the very same request again; a crash
   * stops the calling code before a write is sent, or right after it committed.
   */
  middleware(): Middleware {
    return (next, context) => async (args) => {
      const command = context.commandName ?? 'unknown';
      const { scope, key } = this.place('background');
      if (!this.active) return next(args);
      const transaction = command === 'TransactWriteItemsCommand';
      // A crash before a booking's transaction: the steps before it (the request's claim, its reads) happened.
      // Not before the claim's own writes: a claim left in progress holds its id for its 60-s lease, which
      // only slows a run (the idempotency tests cover it).
      if (transaction && this.draw(key, 'crash-before') < this.rates.crashBeforeWrite) {
        this.record('crash_before_write', scope, command);
        throw new SimulatedCrash(`before ${command}`);
      }
      if (transaction && this.draw(key, 'conflict') < this.rates.conflict) {
        this.record('conflict', scope, command);
        throw cancelled('TransactionConflict', countItems(args));
      }
      if (this.draw(key, 'throttle') < this.rates.throttle) {
        this.record('throttle', scope, command);
        if (transaction) throw cancelled('ThrottlingError', countItems(args));
        throw new ProvisionedThroughputExceededException({
          message: 'The level of configured provisioned throughput for the table was exceeded',
          $metadata: {},
        });
      }
      const result = await next(args);
      if (!this.active) return result;
      if (LOSABLE.has(command) && this.draw(key, 'lost') < this.rates.lostResponse) {
        this.record('lost_response', scope, command);
        throw lostAnswer(result, 'socket hang up (simulated: the answer was lost after the write committed)');
      }
      if (transaction && this.draw(key, 'crash-after') < this.rates.crashAfterCommit) {
        this.record('crash_after_commit', scope, command);
        dropResponse(result);
        throw new SimulatedCrash(`after ${command} committed`);
      }
      return result;
    };
  }

  /** The n-th time `key` is seen (redeliveries of one message count up). */
  private nth(key: string): number {
    const n = (this.onceKeys.get(key) ?? 0) + 1;
    this.onceKeys.set(key, n);
    return n;
  }

  /**
   * The stream dispatcher as the poller calls it: a batch is sometimes dispatched twice (a stream record
   * delivered twice), or the dispatcher dies after dispatching it (the poller starts again at its first
   * record, delivering the batch again).
   */
  wrapDispatcher = (dispatch: StreamDispatcher): StreamDispatcher => {
    return async (event) => {
      const first = event.Records[0]?.dynamodb?.SequenceNumber ?? 'empty';
      const key = `stream ${first}#${this.nth(`stream ${first}`)}`;
      const result = await dispatch(event);
      if (!this.active) return result;
      const scope: Scope = { name: 'stream poller', op: undefined, calls: 0 };
      if (this.draw(key, 'duplicate') < this.rates.streamDuplicate) {
        this.record('stream_duplicate', scope, `${event.Records.length} records`);
        return dispatch(event);
      }
      if (this.draw(key, 'crash') < this.rates.dispatchCrash) {
        this.record('dispatch_crash', scope, `${event.Records.length} records`);
        throw new SimulatedCrash('after dispatching a stream batch');
      }
      return result;
    };
  };

  /** The delivery worker: sometimes it dies after delivering, so the queue redelivers its message. */
  wrapWorker = (work: DeliveryWorker): DeliveryWorker => {
    return async (event) => {
      const body = event.Records[0]?.body ?? '';
      const key = `delivery ${body}#${this.nth(`delivery ${body}`)}`;
      const result = await work(event);
      if (this.active && this.draw(key, 'crash') < this.rates.deliveryCrash) {
        this.record('delivery_crash', { name: 'webhook delivery', op: undefined, calls: 0 }, 'after the attempt');
        throw new SimulatedCrash('after a webhook delivery attempt');
      }
      return result;
    };
  };

  /**
   * A FIFO queue in front of a consumer (bank and custody events), as SQS runs it: a message whose batch
   * failed, or whose consumer died after applying it, is delivered again; a message is now and then delivered
   * twice anyway (at-least-once). Returns how many times the consumer ran.
   */
  async deliverQueued(
    op: number,
    consume: (event: SQSEvent) => Promise<SQSBatchResponse>,
    event: SQSEvent,
  ): Promise<number> {
    let runs = 0;
    for (let receive = 1; receive <= 10; receive++) {
      runs += 1;
      const key = `op ${op} queue#${receive}`;
      const scope: Scope = { name: `op ${op} queue`, op, calls: 0 };
      let failed: boolean;
      const once = async () => {
        try {
          return (await this.inOperation(op, 100 + receive, () => consume(event))).batchItemFailures.length > 0;
        } catch {
          return true;
        }
      };
      // Two consumers at once on the first receive now and then: a failure of either is redelivered.
      if (receive === 1 && this.active && this.draw(key, 'concurrent') < this.rates.queueConcurrent) {
        this.record('queue_concurrent', scope, 'handled twice at once');
        runs += 1;
        failed = (await Promise.all([once(), once()])).some(Boolean);
      } else failed = await once();
      if (!failed && this.active && this.draw(key, 'crash') < this.rates.queueCrash) {
        this.record('queue_crash', scope, 'after applying the message');
        failed = true;
      }
      if (failed) continue;
      if (this.active && this.draw(key, 'redeliver') < this.rates.queueRedelivery) {
        this.record('queue_redelivery', scope, 'delivered again');
        continue;
      }
      return runs;
    }
    return runs;
  }
}

function countItems(args: unknown): number {
  const input = (args as { input?: { TransactItems?: unknown[] } }).input;
  return input?.TransactItems?.length ?? 1;
}

/** A transaction cancelled for `code` on one of its items (the others `None`), as DynamoDB reports it. */
function cancelled(code: 'TransactionConflict' | 'ThrottlingError', items: number): TransactionCanceledException {
  const at = 0;
  return new TransactionCanceledException({
    message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${code}]`,
    $metadata: {},
    CancellationReasons: Array.from({ length: Math.max(1, items) }, (_, i) => ({ Code: i === at ? code : 'None' })),
  });
}
