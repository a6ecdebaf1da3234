import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { createContext } from '../../lib/edge.js';
import { ensureTables, freePort, startDynamoLocal, type LocalDynamo } from './dynamodb.js';
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

  let lock: DataDirLock | undefined;
  let dynamoChild: ChildProcess | undefined;
  let dynamo: LocalDynamo | undefined;
  let http: Awaited<ReturnType<typeof startHttpServer>> | undefined;
  let stopWorkflows: (() => Promise<void>) | undefined;
  let stopWebhooks: (() => Promise<void>) | undefined;
  let wroteStackInfo = false;
  let stopping = false;

  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => {
      dynamoChild?.kill('SIGKILL');
      process.exit(code);
    }, STOP_TIMEOUT_MS).unref();
    if (wroteStackInfo) removeStackInfo();
    http?.server.closeAllConnections();
    await Promise.allSettled([
      stopWorkflows?.(),
      stopWebhooks?.(),
      new Promise((r) => (http ? http.server.close(r) : r(undefined))),
    ]);
    if (dynamo) await dynamo.stop();
    else if (dynamoChild && dynamoChild.exitCode === null) {
      await new Promise<void>((r) => {
        dynamoChild!.once('exit', () => r());
        dynamoChild!.kill('SIGTERM');
      });
    }
    lock?.release();
    process.exit(code);
  };
  // Registered first, so a signal during start-up still stops what has started.
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  try {
    mkdirSync(dir, { recursive: true });
    lock = lockDataDir(dir);
    await assertPortFree(port, host);
    mkdirSync(resolve(dir, 'dynamodb'), { recursive: true });
    const dynamoPort = process.env.DYNAMODB_PORT ? Number(process.env.DYNAMODB_PORT) : await freePort();
    dynamo = await startDynamoLocal({
      port: dynamoPort,
      dataDir: resolve(dir, 'dynamodb'),
      onSpawn: (child) => (dynamoChild = child),
    });
    if (stopping) return;
    await ensureTables(dynamo.endpoint, LOCAL_TABLES);
    // The local runtime's edge: one context for the server and the settlement runner.
    const config = localConfig(dynamo.endpoint, LOCAL_TABLES, undefined, {
      SETTLEMENT_SESSION_SECONDS: process.env.SETTLEMENT_SESSION_SECONDS ?? '5',
    });
    const { startLocalWorkflows } = await import('./workflow-runner.js');
    const workflows = await startLocalWorkflows(createContext(config));
    stopWorkflows = workflows.stop;
    // Webhooks: the stream poller, the in-process delivery queue and the sweep timer.
    const { startLocalWebhooks } = await import('./webhook-runtime.js');
    stopWebhooks = (await startLocalWebhooks(workflows.ctx)).stop;
    http = await startHttpServer(workflows.ctx, port, host, { requestsPerKey: requestsPerKeyFrom(process.env) });
  } catch (error) {
    console.error(`npm start: ${(error as Error).message}`);
    await stop(1);
    return;
  }
  if (stopping) return;
  writeStackInfo({
    dynamodb_endpoint: dynamo.endpoint,
    table_name: LOCAL_TABLES.main,
    ttl_table_name: LOCAL_TABLES.ttl,
    base_url: http.baseUrl,
    pid: process.pid,
  });
  wroteStackInfo = true;
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
