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
    // Two files at a time on the one DynamoDB Local: on 2 cores vitest's default is one, and the suite waits on
    // DynamoDB Local and on timers more than on the CPU (README, "Run it").
    maxWorkers: 2,
    // Metrics (EMF lines on stdout) stay off: every request would print one. The request-log test turns them on.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', POWERTOOLS_METRICS_DISABLED: 'true' },
  },
});
