export const TEST_TABLES = { main: 'test-main', ttl: 'test-windows' };
/** A fixed AES key: test data is thrown away with the in-memory database. */
export const TEST_SECRETS_KEY = Buffer.alloc(32, 7).toString('base64');
