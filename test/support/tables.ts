/**
 * The tables a test file shares with the other files of its vitest worker: each worker (VITEST_POOL_ID, 1 to
 * maxWorkers) has a pair of its own. DynamoDB Local takes a lock per table for every write and gives up on a
 * request after waiting 10 s for it, so files running at once on one table slow each other down and, when two
 * heavy ones meet, fail; on tables of their own two workers write side by side.
 */
export function testTablesOf(worker: number): { main: string; ttl: string } {
  return { main: `test-main-${worker}`, ttl: `test-windows-${worker}` };
}

export const TEST_TABLES = testTablesOf(Number(process.env.VITEST_POOL_ID ?? '1'));
/** A fixed AES key: test data is thrown away with the in-memory database. */
export const TEST_SECRETS_KEY = Buffer.alloc(32, 7).toString('base64');
