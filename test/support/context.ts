import { inject } from 'vitest';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type AppContext } from '../../lib/context.js';
import { type SettlementWorkflow } from '../../lib/runtime/settlement-workflow.js';
import { wrapDocumentClient } from '../../lib/runtime/aws-clients.js';
import { createContext } from '../../lib/edge.js';
import { localConfig } from '../../infra/local/local-env.js';
import { attachDynamoDbLimits } from '../../infra/local/dynamodb-limits.js';
import { enforce } from '../../infra/local/iam/enforcement.js';
import { DEFAULT_RETRY_POLICY, realTiming, type Retrying } from '../../lib/runtime/retry-policy.js';
import { TEST_SECRETS_KEY, TEST_TABLES } from './tables.js';
import { TestClock } from './clock.js';
import type { DeployedRoles } from '../../infra/local/iam/roles.js';

export type TestContext = AppContext & { clock: TestClock };

export interface TestContextOptions {
  /** Configuration variables to set (e.g. SETTLEMENT_SESSION_SECONDS). */
  env?: Record<string, string | undefined>;
  /** A DynamoDB client of the test's own (one carrying a fault-injecting middleware). */
  db?: DynamoDBDocumentClient;
  workflow?: SettlementWorkflow;
  /** The store's retry policy and timing (e.g. pauses that don't wait, a counted sleep). */
  retry?: Retrying;
  /** Tables of the test's own (a file whose checks scan a whole table); the shared test tables otherwise. */
  tables?: { main: string; ttl: string };
  /** The functions' roles (a test removing a grant); the deployed stack's otherwise. */
  roles?: DeployedRoles;
}

/**
 * Production's retry policy with a longer time bound. The bound (10 s) is sized for DynamoDB's own latency; a
 * call to DynamoDB Local on a 2-core machine running the whole suite can take seconds, and a retry would
 * then be refused for want of time (a 503 the test never expected) though no attempt ran out.
 */
export const TEST_RETRY: Retrying = { policy: { ...DEFAULT_RETRY_POLICY, maxElapsedMs: 60_000 }, timing: realTiming };

/** The DynamoDB Local this run started (the global setup provides it). */
export function testEndpoint(): string {
  const endpoint = inject('dynamoEndpoint');
  // Integration tests refuse to run against anything but the DynamoDB Local this run started.
  if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(endpoint)) throw new Error(`refusing to test against ${endpoint}`);
  return endpoint;
}

/**
 * A context on the test tables with a clock of its own. Logs errors only unless LOG_LEVEL says otherwise.
 * Every handler the local runtime runs with it acts under its function's deployed role (docs/run-as-deployed.md):
 * a call its role does not allow fails with AccessDeniedException, so every test exercises IAM too.
 */
export function testContext(options: TestContextOptions = {}): TestContext {
  // Production's connection and request timeouts (1 s, 2 s) are for DynamoDB's own service; DynamoDB Local on a
  // loaded 2-core test machine can take longer to accept, so tests allow more unless a test sets its own.
  const config = localConfig(testEndpoint(), options.tables ?? TEST_TABLES, TEST_SECRETS_KEY, {
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
    // Tests send hundreds of requests a second from one platform (160 concurrent transfers, 64 callers for 30 s):
    // the default key limit is out of their way; a test of the limits sets its platform's (rate-limits.test.ts).
    RATE_LIMIT_RPS: '1000',
    RATE_LIMIT_BURST: '1000',
    AWS_CONNECT_TIMEOUT_MS: '10000',
    AWS_REQUEST_TIMEOUT_MS: '30000',
    // DynamoDB Local answers InternalServerError ("too long waiting for a lock") when many transactions
    // queue on its one write lock; DynamoDB does not. The SDK retries it: give it room for that.
    AWS_MAX_ATTEMPTS: '6',
    // And fewer calls in flight per client: past a handful, calls only wait on that lock, and one that waits
    // 10 s fails. Queued in the client they wait without a limit (every worker's files share one DynamoDB Local).
    AWS_MAX_SOCKETS: '8',
    // A queued booking's wait bound (8 s) is sized for DynamoDB; rounds on DynamoDB Local under the suite's load
    // take longer. Tests of the bound itself set their own (hot-accounts.test.ts: 300 ms).
    HOT_ACCOUNT_WAIT_MS: '30000',
    ...options.env,
  });
  const context = createContext(config, {
    clock: new TestClock(),
    db: options.db,
    workflow: options.workflow,
    retry: options.retry ?? TEST_RETRY,
  }) as TestContext;
  // What DynamoDB refuses and DynamoDB Local doesn't (infra/local/dynamodb-limits.ts), as `npm start` does.
  // A stand-in without a middleware stack (a test's wrapper forwarding to a client) is limited where it forwards to.
  if (context.db.middlewareStack) attachDynamoDbLimits(context.db, context.tables);
  return enforce(context, options.roles ?? inject('deployedRoles'));
}

/**
 * This test file's context (vitest runs each file in its own module graph, so each file has its own): the
 * in-process server of `service.ts` is bound to it, and tests move time through `ctx.clock`.
 */
export const ctx: TestContext = testContext();

type Middleware = Parameters<DynamoDBClient['middlewareStack']['add']>[0];

/**
 * A document client on the test DynamoDB carrying one fault-injecting middleware. At the `deserialize` step
 * (the default) it sits inside the SDK's retry loop and sees every attempt; at `initialize`, every call once.
 * `maxAttempts` is the SDK's own retry bound (the client's default, 4 for DynamoDB, unless given).
 */
export function clientWith(
  middleware: Middleware,
  name: string,
  step: 'initialize' | 'deserialize' = 'deserialize',
  options: { maxAttempts?: number } = {},
): DynamoDBDocumentClient {
  const base = new DynamoDBClient({
    region: 'us-east-1',
    maxAttempts: options.maxAttempts,
    endpoint: testEndpoint(),
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  if (step === 'initialize') base.middlewareStack.add(middleware as never, { step, name });
  else base.middlewareStack.add(middleware, { step, name });
  return wrapDocumentClient(base);
}
