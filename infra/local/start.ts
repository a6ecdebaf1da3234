import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { ensureTables, freePort, startDynamoLocal } from './dynamodb.js';
import { dataDir, LOCAL_TABLES, removeStackInfo, useLocalTables, writeStackInfo } from './local-env.js';
import { startHttpServer } from './server.js';

/**
 * `npm start`: the whole service on one machine. DynamoDB Local (persisting under DATA_DIR), the tables,
 * the route table served over HTTP by the same handlers as on AWS, and the settlement workflow run
 * in-process from the same definition. Ctrl-C or SIGTERM stops all of it.
 */
async function main(): Promise<void> {
  const dir = dataDir();
  mkdirSync(resolve(dir, 'dynamodb'), { recursive: true });
  const port = Number(process.env.PORT ?? 3000);
  const dynamoPort = process.env.DYNAMODB_PORT ? Number(process.env.DYNAMODB_PORT) : await freePort();

  const dynamo = await startDynamoLocal({ port: dynamoPort, dataDir: resolve(dir, 'dynamodb') });
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    removeStackInfo();
    await Promise.allSettled([stopWorkflows?.(), new Promise((r) => http?.server.close(r))]);
    await dynamo.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  let http: Awaited<ReturnType<typeof startHttpServer>> | undefined;
  let stopWorkflows: (() => Promise<void>) | undefined;
  try {
    await ensureTables(dynamo.endpoint, LOCAL_TABLES);
    useLocalTables(dynamo.endpoint);
    process.env.SETTLEMENT_SESSION_SECONDS ??= '5';
    const { startLocalWorkflows } = await import('./workflow-runner.js');
    stopWorkflows = await startLocalWorkflows();
    http = await startHttpServer(port, process.env.HOST ?? '127.0.0.1');
  } catch (error) {
    console.error((error as Error).message);
    await stop(1);
    return;
  }
  writeStackInfo({
    dynamodb_endpoint: dynamo.endpoint,
    table_name: LOCAL_TABLES.main,
    ttl_table_name: LOCAL_TABLES.ttl,
    base_url: http.baseUrl,
    pid: process.pid,
  });
  console.log(`Service listening on ${http.baseUrl}`);
  console.log(`DynamoDB Local on ${dynamo.endpoint}, data in ${dir}`);
  console.log('Create a platform with: npm run admin -- platform create --name "My Platform"');
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
