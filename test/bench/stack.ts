import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { ensureTables, freePort, localClient, startDynamoLocal, type LocalDynamo } from '../../infra/local/dynamodb.js';
import { localConfig } from '../../infra/local/local-env.js';
import { requestsPerKeyFrom } from '../../infra/local/key-gate.js';
import { startHttpServer } from '../../infra/local/server.js';
import { type AppContext } from '../../lib/context.js';
import { documentClient } from '../../lib/runtime/aws-clients.js';
import { createContext } from '../../lib/edge.js';
import type { DynamoDBDocumentClient, TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { WRITE_COMMANDS, writeUnits } from './capacity.js';

/** Its own table names, so the benchmark's data is never mistaken for anyone else's. */
export const BENCH_TABLES = { main: 'bench-main', ttl: 'bench-windows' };

/**
 * Counts the DynamoDB operations this process sends, by command. While `capacity` is on it also asks each
 * call for ReturnConsumedCapacity=TOTAL and adds up the write units of the calls that succeed twice over:
 * as DynamoDB Local reports them, and by DynamoDB's per-item rules (see capacity.ts for why both).
 * Installed as a middleware on the shared client, so it sees the handlers' calls exactly as they make them.
 */
export class DynamoMeter {
  calls = 0;
  readonly byCommand = new Map<string, number>();
  capacity = false;
  /** Write units of successful writes as DynamoDB Local reported them. */
  reportedWcu = 0;
  /** The same writes priced by DynamoDB's rules. */
  ruleWcu = 0;
  /** While on: read units of reads (Query, GetItem, BatchGetItem) as DynamoDB Local reports them. */
  readCapacity = false;
  readUnits = 0;
  /** While set: every TransactWriteItems input the handlers send, as they send it (awards.ts replays them raw). */
  transactions: TransactWriteCommandInput[] | undefined;
  /**
   * While set: every call with its command, when it was sent and answered (performance.now()) and the call
   * stack that sent it, async frames included (hot-accounts.ts tells the engine's rounds by it).
   */
  traced: TracedCall[] | undefined;

  snapshot() {
    return {
      calls: this.calls,
      byCommand: new Map(this.byCommand),
      reportedWcu: this.reportedWcu,
      ruleWcu: this.ruleWcu,
    };
  }

  /** What was sent since `before`: total calls, calls by command, write units. */
  since(before: ReturnType<DynamoMeter['snapshot']>) {
    const byCommand = new Map<string, number>();
    for (const [command, count] of this.byCommand) {
      const delta = count - (before.byCommand.get(command) ?? 0);
      if (delta > 0) byCommand.set(command, delta);
    }
    return {
      calls: this.calls - before.calls,
      byCommand,
      reportedWcu: this.reportedWcu - before.reportedWcu,
      ruleWcu: this.ruleWcu - before.ruleWcu,
    };
  }

  record(command: string): void {
    this.calls += 1;
    this.byCommand.set(command, (this.byCommand.get(command) ?? 0) + 1);
  }
}

export interface TracedCall {
  command: string;
  startMs: number;
  endMs: number;
  stack: string;
}

/** The stack that sent a call: deep enough to reach through the SDK's middleware to the service's frames. */
function callStack(): string {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 80;
  try {
    return new Error().stack ?? '';
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** `GetItem×2 PutItem×1`, per request when divided by `per`. */
export function describeCalls(byCommand: ReadonlyMap<string, number>, per = 1): string {
  return [...byCommand].map(([command, count]) => `${command}×${Number((count / per).toFixed(2))}`).join(' ');
}

const WIRE_BODY = Symbol('bench wire body');
const READ_COMMANDS = new Set(['Query', 'GetItem', 'BatchGetItem']);

export function installMeter(endpoint: string, db: DynamoDBDocumentClient): DynamoMeter {
  const meter = new DynamoMeter();
  // Sizing updated items needs reads the meter must not count: a separate, plain client.
  const reader = localClient(endpoint);
  const stack = db.middlewareStack;
  stack.add(
    (next, context) => async (args) => {
      const command = String(context.commandName ?? 'unknown').replace(/Command$/, '');
      meter.record(command);
      if (command === 'TransactWriteItems') meter.transactions?.push(args.input as TransactWriteCommandInput);
      const pricing = meter.capacity && WRITE_COMMANDS.has(command);
      const reading = meter.readCapacity && READ_COMMANDS.has(command);
      if (pricing || reading) (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'TOTAL';
      const result = await next(args);
      if (reading) {
        const consumed = (result.output as { ConsumedCapacity?: unknown }).ConsumedCapacity;
        for (const entry of (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) as {
          CapacityUnits?: number;
          ReadCapacityUnits?: number;
        }[]) {
          meter.readUnits += entry.ReadCapacityUnits ?? entry.CapacityUnits ?? 0;
        }
      }
      if (pricing) {
        const consumed = (result.output as { ConsumedCapacity?: unknown }).ConsumedCapacity;
        for (const entry of (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) as {
          CapacityUnits?: number;
          WriteCapacityUnits?: number;
        }[]) {
          meter.reportedWcu += entry.WriteCapacityUnits ?? entry.CapacityUnits ?? 0;
        }
        const body = (context as Record<symbol, unknown>)[WIRE_BODY] as Record<string, unknown> | undefined;
        if (body) meter.ruleWcu += await writeUnits(command, body, reader);
      }
      return result;
    },
    { step: 'initialize', name: 'benchDynamoMeter' },
  );
  // The call's time and stack, while tracing (first of its step, so the time spans the meter's work too).
  stack.add(
    (next, context) => async (args) => {
      if (!meter.traced) return next(args);
      const command = String(context.commandName ?? 'unknown').replace(/Command$/, '');
      const traced: TracedCall = { command, startMs: performance.now(), endMs: 0, stack: callStack() };
      meter.traced.push(traced);
      try {
        return await next(args);
      } finally {
        traced.endMs = performance.now();
      }
    },
    { step: 'initialize', name: 'benchDynamoTrace', priority: 'high' },
  );
  // The request as sent (attribute values in wire form), for pricing it; only while pricing is on.
  stack.add(
    (next, context) => async (args) => {
      const { body } = args.request as { body?: unknown };
      // The JSON protocol serializer hands over the body as text or as its UTF-8 bytes, depending on version.
      const text =
        typeof body === 'string' ? body : body instanceof Uint8Array ? new TextDecoder().decode(body) : undefined;
      if (meter.capacity && text !== undefined) (context as Record<symbol, unknown>)[WIRE_BODY] = JSON.parse(text);
      return next(args);
    },
    { step: 'build', name: 'benchWireBody' },
  );
  return meter;
}

/**
 * DynamoDB Local in memory on a free port. A JVM starting on a loaded machine can take past start-up's 30 s
 * (load average 19 on two cores did): it is tried up to three times, so a busy machine costs time, not the run.
 */
async function startLocalDynamo(): Promise<LocalDynamo> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startDynamoLocal({ port: await freePort() });
    } catch (error) {
      if (attempt === 3 || !(error instanceof Error) || !error.message.includes('did not start within')) throw error;
      process.stderr.write(`DynamoDB Local did not start in time (attempt ${attempt} of 3); starting it again\n`);
    }
  }
}

let current: AppContext | undefined;

/**
 * The context `startBenchStack` built: its server is bound to it, and the scenarios set up data and swap its
 * settlement workflow through it.
 */
export function benchCtx(): AppContext {
  if (!current) throw new Error('the bench stack is not started');
  return current;
}

export interface BenchStack {
  baseUrl: string;
  dynamoEndpoint: string;
  /** DynamoDB Local's process (a JVM), whose CPU the isolation scenario reports. */
  dynamoPid: number | undefined;
  meter: DynamoMeter;
  stop(): Promise<void>;
}

/**
 * The local stack inside this process: an in-memory DynamoDB Local on a free port with the benchmark's own
 * tables, and the route table served over HTTP on 127.0.0.1 by the real handlers. Nothing under `.data/` is
 * read or written. The settlement runner is started only by the scenario that measures it (settlement.ts).
 */
export async function startBenchStack(): Promise<BenchStack> {
  let local: LocalDynamo | undefined;
  let server: Server | undefined;
  const stop = async () => {
    if (server) {
      server.closeAllConnections();
      await new Promise((resolveClose) => server!.close(resolveClose));
    }
    await local?.stop();
  };
  try {
    local = await startLocalDynamo();
    await ensureTables(local.endpoint, BENCH_TABLES);
    // A throwaway key: the bench must not create or read the local stack's key under DATA_DIR.
    // The scenarios drive one platform at hundreds of requests a second: the default key limit is out of their
    // way; the isolation row that floods a platform past its limit sets that platform's (lists.ts).
    // The rate-limit counter as the stack deploys it (RATE_LIMIT_COUNTER=table, infra/stack.ts), not the local
    // server's in-memory one: its UpdateItems in the TTL table are part of what a request costs on AWS, and the
    // bench counts calls as deployed. Tokens come in blocks of at most burst/8 (lib/store/rate-limits.ts), so a
    // busy key writes once per several requests; at this limit a block is up to 125, deployed (burst 40) up to 5.
    const config = localConfig(local.endpoint, BENCH_TABLES, randomBytes(32).toString('base64'), {
      RATE_LIMIT_RPS: '1000',
      RATE_LIMIT_BURST: '1000',
      RATE_LIMIT_COUNTER: 'table',
    });
    const db = documentClient(config);
    const meter = installMeter(local.endpoint, db);
    current = createContext(config, { db });
    // As `npm start` serves: each API key's requests admitted a few at a time (infra/local/key-gate.ts).
    const http = await startHttpServer(current, 0, '127.0.0.1', { requestsPerKey: requestsPerKeyFrom(process.env) });
    server = http.server;
    return { baseUrl: http.baseUrl, dynamoEndpoint: local.endpoint, dynamoPid: local.process.pid, meter, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
