import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { localClient } from '../../infra/local/dynamodb.js';
import { createTableInput, MAIN_TABLE, TTL_TABLE } from '../../lib/store/table/tables.js';

/**
 * The tables a test file shares with the other files of its vitest worker: each worker (VITEST_POOL_ID, 1 to
 * maxWorkers) has tables of its own. DynamoDB Local takes a lock per table for every write and gives up on a
 * request after waiting 10 s for it, so files running at once on one table slow each other down and, when two
 * heavy ones meet, fail; on tables of their own the workers write side by side.
 *
 * Two pairs per worker, both made before the run writes anything (`test/support/global-setup.ts`): one with
 * the main table's stream, as deployed, for the files that learn of events from it (the "streams" project in
 * vitest.config.ts sets TEST_TABLE_STREAM), and one without, for every other file. DynamoDB Local pays for a
 * stream on every write: on a table made at the start, 300 four-item transactions took 1.4-1.7 s with the
 * stream and 1.1 s without; on one made once the database holds 40,000 items, 84-88 s with it and 1.2 s
 * without (all tables share one database). So a test that needs tables of its own makes them without the
 * stream (`createStreamFreeTables`), or takes the spare stream pair made at the start (`spareStreamTables`).
 */
export function streamTablesOf(worker: number): { main: string; ttl: string } {
  return { main: `test-main-${worker}`, ttl: `test-windows-${worker}` };
}

export function plainTablesOf(worker: number): { main: string; ttl: string } {
  return { main: `test-plain-main-${worker}`, ttl: `test-plain-windows-${worker}` };
}

/** A worker's spare tables with the stream, for the one test that needs a stream table no other file writes. */
export function spareStreamTablesOf(worker: number): { main: string; ttl: string } {
  return { main: `test-spare-main-${worker}`, ttl: `test-spare-windows-${worker}` };
}

const WORKER = Number(process.env.VITEST_POOL_ID ?? '1');

export const TEST_TABLES = process.env.TEST_TABLE_STREAM === '1' ? streamTablesOf(WORKER) : plainTablesOf(WORKER);
export const spareStreamTables = () => spareStreamTablesOf(WORKER);

/**
 * Names for tables of a test file's own (`name-main-<pid>`, `name-ttl-<pid>`), for a file that scans a whole
 * table: the shared worker tables hold every earlier file's items by the time it runs. Make them with
 * `createStreamFreeTables`.
 */
export function ownTableNames(name: string): { main: string; ttl: string } {
  return { main: `${name}-main-${process.pid}`, ttl: `${name}-ttl-${process.pid}` };
}

/** A fixed AES key: test data is thrown away with the in-memory database. */
export const TEST_SECRETS_KEY = Buffer.alloc(32, 7).toString('base64');

/** Tables as `ensureTables` makes them, without the main table's stream (and without TTL: nothing here waits on it). */
export async function createStreamFreeTables(endpoint: string, names: { main: string; ttl: string }): Promise<void> {
  const client = localClient(endpoint);
  try {
    for (const [name, table] of [
      [names.main, MAIN_TABLE],
      [names.ttl, TTL_TABLE],
    ] as const) {
      const input = createTableInput(name, table);
      delete (input as { StreamSpecification?: unknown }).StreamSpecification;
      await client.send(new CreateTableCommand(input));
    }
  } finally {
    client.destroy();
  }
}
