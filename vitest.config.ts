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
    // One file at a time. Each worker has tables of its own (test/support/tables.ts), so two at a time no longer
    // queue on DynamoDB Local's per-table lock and took 4-6 min instead of 7-9; but the two share its one JVM and
    // the 2 cores, and under that load the heaviest files (1,000 award recipients, 160 debits of one account)
    // still met its 10-s lock timeout as 503s in 2 of 7 runs here. Set 2 on a machine with cores to spare.
    maxWorkers: 1,
    // Metrics (EMF lines on stdout) stay off: every request would print one. The request-log test turns them on.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', POWERTOOLS_METRICS_DISABLED: 'true' },
  },
});
