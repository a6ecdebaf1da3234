import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import { longestFirst } from './test/support/sequencer.js';

/**
 * Files whose claims hold only if their requests keep pace with real time: 1,000 award recipients and 160
 * concurrent debits of one account (each request must finish inside the local Lambda's 29 s), settlement legs
 * of seconds (each session must run in its second), a property of concurrent bookings. They run first, one at
 * a time, with DynamoDB Local fresh and both cores to themselves. Beside another file they missed those bounds
 * in 2 of 7 runs; run after the other files, when DynamoDB Local holds the whole run's data, in 2 of 3 (the
 * 1,000-recipient distribution took 292 s instead of 28). The rest of the awards tests run beside other files.
 */
const PACED = [
  'test/integration/awards-limit.test.ts',
  'test/integration/hot-accounts.test.ts',
  'test/integration/settlement-legs.test.ts',
  'test/integration/ledger-properties.test.ts',
];

/**
 * Files that need modules of their own: the request log's test turns metrics on and reads what reaches stdout
 * through loggers it builds at import. Every other file shares its worker's modules with the files of its project
 * before it (`isolate: false`: a file then imports nothing afresh, where a fresh worker spends seconds importing the
 * service; test/support/setup-env.ts puts back what a file changed of the shared test context, the environment and
 * spies). The paced and stream files too: each stops in `afterAll` what it started (workflow runners, webhook
 * runtimes, receivers).
 */
const OWN_MODULES = ['test/integration/request-log.test.ts'];

/**
 * Files that learn of events from the main table's stream (webhook deliveries, status events): they run on the
 * worker tables that have one (TEST_TABLE_STREAM, test/support/tables.ts), every other file on tables without
 * it, which DynamoDB Local writes faster.
 */
const STREAMS = [
  'test/integration/webhooks.test.ts',
  'test/integration/status-events.test.ts',
  'test/integration/participant-status.test.ts',
  'test/integration/rewards.test.ts',
  'test/integration/liquidity.test.ts',
  'test/integration/convert-withdraw.test.ts',
];

/**
 * The longest files of group 2, started first in this order so the short ones fill in behind them and both
 * workers end together (test/support/sequencer.ts); the stream files together, as each switch between projects
 * starts a worker afresh. Seconds of the full run of 2026-11-28 19:41 (2 vCPUs, beside a simulation), longest first.
 */
const LONGEST_FIRST = [
  'test/integration/npm-start.test.ts', // 110: three starts of the service (two at a time)
  'test/integration/payments.test.ts', // 61
  'test/integration/migrations.test.ts', // 60
  'test/integration/awards.test.ts', // 38 (2026-11-29, without the 1,000-recipient test)
  'test/integration/throttling.test.ts', // 40
  'test/infra/bundles.test.ts', // 39
  // The stack's assertions, early and together: each builds the stack as it is collected, the first in a
  // worker importing the CDK (about 8 s), the default stack then kept for the worker (test/support/template.ts).
  'test/infra/stack.test.ts',
  'test/infra/operations.test.ts',
  'test/infra/webhooks.test.ts',
  'test/infra/iam-grants.test.ts',
  'test/integration/participant-status.test.ts', // 22, streams
  'test/integration/webhooks.test.ts', // 20, streams
  'test/integration/liquidity.test.ts', // 15, streams
  'test/integration/status-events.test.ts', // 15, streams
  'test/integration/convert-withdraw.test.ts', // 11, streams
  'test/integration/rewards.test.ts', // 7, streams
  'test/integration/request-log.test.ts', // 5, modules of its own
  'test/integration/trades.test.ts', // 28
  'test/integration/hot-account-faults.test.ts', // 24
  'test/integration/auth.test.ts', // 20
  'test/integration/settlement-crash.test.ts', // 18
  'test/integration/ledger-check.test.ts', // 16
  'test/integration/settlement.test.ts', // 14
  'test/integration/account-movements.test.ts', // 14
];

/** Files at a time in group 2 (see below); the global set-up makes tables for as many workers. */
const WORKERS = 3;

/** What every project shares: the set-up of each test process, time limits, one process per file. */
const shared: TestProjectInlineConfiguration['test'] = {
  setupFiles: ['test/support/setup-env.ts'],
  testTimeout: 60_000,
  hookTimeout: 60_000,
  pool: 'forks',
  // An `expect.poll` waits for what a background loop (webhook delivery, the settlement runner) does next: 1 s,
  // vitest's default, is less than such a loop's turn takes under the suite's load (a CI run timed one out).
  expect: { poll: { timeout: 10_000 } },
  // Metrics (EMF lines on stdout) stay off: every request would print one. The request-log test turns them on.
  env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', POWERTOOLS_METRICS_DISABLED: 'true' },
};

/**
 * One DynamoDB Local for the whole run (the root's global setup, which gives each worker tables of its own:
 * DynamoDB Local serves each table behind one lock); each test file gets its own in-process HTTP server and
 * its own platforms and ids, so nothing is reset between tests. The paced files first, one at a time (group 1),
 * then the rest three at a time (group 2: the stream files and the others share its three workers). Two at a time
 * left a quarter of the two cores idle, each file waiting on its calls in turn: 355 s, where three took 317 s
 * (2026-11-29). Three overloaded DynamoDB Local's JVM (13 minutes, failures) until it compiled less
 * (`infra/local/dynamodb.ts`).
 */
export default defineConfig({
  test: {
    // Transformed modules kept on disk: the four projects each transform every file they import, and with this
    // the first one's work serves the others (and the next run).
    experimental: { fsModuleCache: true },
    globalSetup: ['test/support/global-setup.ts'],
    maxWorkers: WORKERS,
    sequence: { sequencer: longestFirst(LONGEST_FIRST) },
    projects: [
      {
        test: {
          ...shared,
          name: 'paced',
          isolate: false,
          include: PACED,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          ...shared,
          name: 'streams',
          isolate: false,
          include: STREAMS,
          env: { ...shared.env, TEST_TABLE_STREAM: '1' },
          maxWorkers: WORKERS,
          sequence: { groupOrder: 2 },
        },
      },
      {
        test: {
          ...shared,
          name: 'own-modules',
          include: OWN_MODULES,
          maxWorkers: WORKERS,
          sequence: { groupOrder: 2 },
        },
      },
      {
        test: {
          ...shared,
          name: 'parallel',
          isolate: false,
          include: ['test/**/*.test.ts'],
          exclude: [...PACED, ...STREAMS, ...OWN_MODULES],
          maxWorkers: WORKERS,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
