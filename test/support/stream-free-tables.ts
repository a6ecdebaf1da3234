import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { localClient } from '../../infra/local/dynamodb.js';
import { createTableInput, MAIN_TABLE, TTL_TABLE } from '../../lib/store/table/tables.js';
import { testEndpoint } from './context.js';

/**
 * Tables of a test's own, as `ensureTables` makes them but without the main table's stream, for a test that
 * never reads it. DynamoDB Local keeps every table in one database, and a table whose stream starts once that
 * database holds the run's data writes slowly: with 100,000 items in the worker's tables, 200 puts took 20 s on
 * such a table (0.4 s without the stream, 0.6 s on a table created before the data), and the migrations test's
 * whole-table run 110 s on `ensureTables`'s tables (47 s in a full run), 2.3 s on these.
 */
export async function createTablesWithoutStream(names: { main: string; ttl: string }): Promise<void> {
  const client = localClient(testEndpoint());
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
