import { defineConfig } from 'vitest/config';

/**
 * One DynamoDB Local for the whole run (global setup); each test file gets its own in-process HTTP server
 * and its own platforms and ids, so nothing is reset between tests.
 */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/setup-env.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two files at a time, each worker on its own pair of tables in the one DynamoDB Local (test/support/tables.ts):
    // DynamoDB Local locks a table for every write and gives up after 10 s, so two workers on shared tables
    // queued behind each other and failed when two heavy files met; on their own tables they write side by side.
    maxWorkers: 2,
    // Metrics (EMF lines on stdout) stay off: every request would print one. The request-log test turns them on.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', POWERTOOLS_METRICS_DISABLED: 'true' },
  },
});
