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
    // One file at a time on the one DynamoDB Local. Two at a time took 4.6-5.6 min instead of about 9, but
    // DynamoDB Local writes under one lock and answers InternalServerError ("too long waiting for a lock") when
    // two heavy files meet: 2 of 3 such runs here failed (README, "Run it").
    maxWorkers: 1,
    // Metrics (EMF lines on stdout) stay off: every request would print one. The request-log test turns them on.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', POWERTOOLS_METRICS_DISABLED: 'true' },
  },
});
