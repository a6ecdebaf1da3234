import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { createContext } from '../../lib/edge.js';
import { attachDynamoDbLimits } from './dynamodb-limits.js';
import { ensureTables, freePort, startDynamoLocal, stopChild, type LocalDynamo } from './dynamodb.js';
import { assertPortFree, lockDataDir, type DataDirLock } from './instance-lock.js';
import { dataDir, LOCAL_TABLES, localConfig, removeStackInfo, writeStackInfo } from './local-env.js';
import { requestsPerKeyFrom } from './key-gate.js';
import { startHttpServer } from './server.js';

/** Longest a stop may take before the process exits anyway (a child that ignores SIGTERM gets SIGKILL). */
const STOP_TIMEOUT_MS = 10_000;

/**
 * `npm start`: the whole service on one machine. DynamoDB Local (persisting under DATA_DIR, on a free port
 * of its own unless DYNAMODB_PORT says otherwise), the tables, the route table served over HTTP by the same
 * handlers as on AWS, the settlement workflow run in-process from the same definition, and the webhook
 * pipeline (stream poller, delivery queue, sweep) on the same dispatcher and delivery code. Ctrl-C or
 * SIGTERM stops all of it, at any point of start-up.
 *
 * A second instance on the same PORT or the same DATA_DIR fails within seconds with a plain message, and
 * touches nothing of the running one (its lock, its state file, its database).
 */
async function main(): Promise<void> {
  const dir = dataDir();
  const port = Number(process.env.PORT ?? 3000);
  const host = process.env.HOST ?? '127.0.0.1';
  const running: Running = { wroteStackInfo: false, stopping: false };
  const stop = (code: number) => stopRunning(running, code);
  // Registered first, so a signal during start-up still stops what has started.
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  let started: { dynamo: LocalDynamo; http: HttpServer } | undefined;
  try {
    started = await startService(running, dir, port, host);
  } catch (error) {
    console.error(`npm start: ${(error as Error).message}`);
    await stop(1);
    return;
  }
  if (running.stopping || !started) return;
  announce(running, started, dir);
}

type HttpServer = Awaited<ReturnType<typeof startHttpServer>>;

/** What has started so far: a stop at any point of start-up stops exactly that, and only once. */
interface Running {
  lock?: DataDirLock;
  dynamoChild?: ChildProcess;
  http?: HttpServer;
  stopWorkflows?: () => Promise<void>;
  stopWebhooks?: () => Promise<void>;
  wroteStackInfo: boolean;
  stopping: boolean;
}

/**
 * Stops the workflows, webhooks and server, then DynamoDB Local, then frees the lock, and exits; a stop that
 * hangs past `STOP_TIMEOUT_MS` exits anyway.
 */
async function stopRunning(running: Running, code: number): Promise<void> {
  if (running.stopping) return;
  running.stopping = true;
  // Exiting kills DynamoDB Local too (`killOnExit`).
  setTimeout(() => process.exit(code), STOP_TIMEOUT_MS).unref();
  if (running.wroteStackInfo) removeStackInfo();
  const { http } = running;
  http?.server.closeAllConnections();
  await Promise.allSettled([
    running.stopWorkflows?.(),
    running.stopWebhooks?.(),
    new Promise((r) => (http ? http.server.close(r) : r(undefined))),
  ]);
  // Started, or only spawned when the stop came during its start-up.
  if (running.dynamoChild) await stopChild(running.dynamoChild);
  running.lock?.release();
  process.exit(code);
}

/**
 * Starts the parts in order, recording each in `running` as it starts; undefined when a stop came first.
 * The lock and the port check come first, so a second instance fails before it touches anything.
 */
async function startService(
  running: Running,
  dir: string,
  port: number,
  host: string,
): Promise<{ dynamo: LocalDynamo; http: HttpServer } | undefined> {
  mkdirSync(dir, { recursive: true });
  running.lock = lockDataDir(dir);
  await assertPortFree(port, host);
  mkdirSync(resolve(dir, 'dynamodb'), { recursive: true });
  const dynamoPort = process.env.DYNAMODB_PORT ? Number(process.env.DYNAMODB_PORT) : await freePort();
  // Every function runs under its deployed role: the stack's constructs are built once (about 4 s of CPU) to read
  // them, while DynamoDB Local's JVM starts beside this process (as long again), rather than after it.
  const [dynamo, roles] = await Promise.all([
    startDynamoLocal({
      port: dynamoPort,
      dataDir: resolve(dir, 'dynamodb'),
      onSpawn: (child) => (running.dynamoChild = child),
    }),
    import('./iam/deployed-roles.js').then(({ deployedRoles }) => deployedRoles()),
  ]);
  if (running.stopping) return undefined;
  await ensureTables(dynamo.endpoint, LOCAL_TABLES);
  // The local runtime's edge: one context for the server and the settlement runner.
  const config = localConfig(dynamo.endpoint, LOCAL_TABLES, undefined, {
    SETTLEMENT_SESSION_SECONDS: process.env.SETTLEMENT_SESSION_SECONDS ?? '5',
  });
  const { enforce } = await import('./iam/enforcement.js');
  const ctx = enforce(createContext(config), roles);
  const { startLocalWorkflows } = await import('./workflow-runner.js');
  // What DynamoDB refuses and DynamoDB Local doesn't (dynamodb-limits.ts).
  attachDynamoDbLimits(ctx.db, ctx.tables);
  const workflows = await startLocalWorkflows(ctx);
  running.stopWorkflows = workflows.stop;
  // Webhooks: the stream poller, the in-process delivery queue and the sweep timer.
  const { startLocalWebhooks } = await import('./webhook-runtime.js');
  running.stopWebhooks = (await startLocalWebhooks(workflows.ctx)).stop;
  const http = await startHttpServer(workflows.ctx, port, host, { requestsPerKey: requestsPerKeyFrom(process.env) });
  running.http = http;
  return { dynamo, http };
}

/** Writes the state file the admin and call tools read, and tells the user where everything is. */
function announce(running: Running, { dynamo, http }: { dynamo: LocalDynamo; http: HttpServer }, dir: string): void {
  writeStackInfo({
    dynamodb_endpoint: dynamo.endpoint,
    table_name: LOCAL_TABLES.main,
    ttl_table_name: LOCAL_TABLES.ttl,
    base_url: http.baseUrl,
    pid: process.pid,
  });
  running.wroteStackInfo = true;
  console.log(`Service listening on ${http.baseUrl}`);
  console.log(`DynamoDB Local on ${dynamo.endpoint}, data in ${dir}`);
  console.log(
    'Create a platform with: npm run -s admin -- platform create --name "My Platform" --reason "first platform"',
  );
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
