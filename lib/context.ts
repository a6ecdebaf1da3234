import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SFNClient } from '@aws-sdk/client-sfn';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { Context as LambdaContext } from 'aws-lambda';
import { parseConfig, type Config } from './config.js';
import { loadTracer, withPowertools } from './observability/lambda-edge.js';
import { SERVICE_NAME } from './observability/metric-names.js';
import { serviceMetrics } from './observability/metrics.js';
import type { EnsureOutcome, SettlementExecutionInput } from './settlement/workflow-io.js';
import { DEFAULT_RETRY_POLICY, realTiming, type Retrying } from './store/retry.js';
import { kmsCipher, type KmsCipher } from './store/secret-cipher.js';
import { memoryRateLimiter, type RateLimiter } from './domain/rate-limits.js';
import { tableRateLimiter } from './store/rate-limits.js';

/**
 * Everything the service's code depends on from outside, built once at the edge and passed in as a
 * parameter (conventions 10, 11, 16): the Lambda handler factory builds it from `process.env` on a
 * container's first invocation, the local runtime (`infra/local`) builds it for `npm start`, and each test
 * file builds its own (with a clock it can move, or a DynamoDB client that injects faults). No module of
 * `lib/` keeps a client, a clock or the configuration of its own.
 */
export interface AppContext {
  clock: Clock;
  /** Numbers are read as `NumberValue` (wrapNumbers) so balances never pass through a JS number. */
  db: DynamoDBDocumentClient;
  tables: Tables;
  workflow: SettlementWorkflow;
  /** Encrypts API secrets on AWS (absent when they are encrypted with the local key); loads its client on first use. */
  kms: KmsCipher | undefined;
  logger: Logger;
  /** Powertools Metrics (embedded metric format); business counts go through `lib/observability/metrics.ts`. */
  metrics: Metrics;
  /** Powertools Tracer, on Lambda with TRACING=active only; the context's SDK clients are captured by it. */
  tracer?: Tracer;
  config: Config;
  /** What this context keeps between calls for its life (a warm container's); no module of `lib/` keeps any. */
  caches: ContextCaches;
  /** The store's retry policy for conflicts and throttling, and where its pauses and jitter come from (`lib/store/retry.ts`). */
  retry: Retrying;
  /** Counts each API key's requests against its limit (RATE_LIMIT_COUNTER: in the table on AWS, in memory locally). */
  rateLimiter: RateLimiter;
}

/** Values worth keeping for a context's life because they cost a call or a derivation; never state. */
export interface ContextCaches {
  /** Decrypted API secrets by their ciphertext (a KMS call each on AWS), each until `untilMs`. */
  apiSecrets: Map<string, { secret: Buffer; untilMs: number }>;
  /** Decrypted webhook endpoint secrets by their ciphertext, each until `untilMs`. */
  webhookSecrets: Map<string, { secret: string; untilMs: number }>;
  /** The list cursors' signing key, derived once per configuration (tests give a context a new one). */
  cursorKeys: WeakMap<Config, Buffer>;
  /** Per hot account's queue, this process's waiters taking turns (lib/store/booking/engine.ts). */
  hotAccounts: Map<string, HotAccountTurns>;
}

/**
 * This process's requests waiting on one hot account: they take turns (one asks DynamoDB at a time) and find
 * the results of the rounds this process committed here, without a read.
 */
export interface HotAccountTurns {
  turn: Promise<void>;
  waiting: number;
  results: Map<string, { outcome: 'booked' | 'refused'; refusal?: { status: 400 | 409; errors: string[] }; item?: number; movementRecorded?: boolean }>;
}

/** The service's notion of now. Everything that compares against time reads it from the context. */
export interface Clock {
  nowMs(): number;
  nowSeconds(): number;
}

export interface Tables {
  main: string;
  ttl: string;
}

/** Starts the settlement execution of a trade (the local runner's entry point). */
export type LocalSettlementStarter = (input: SettlementExecutionInput) => Promise<void>;

/** Starts the execution unless it runs; runs a failed one again (the local counterpart of a redrive). */
export type LocalSettlementEnsurer = (input: SettlementExecutionInput) => Promise<EnsureOutcome>;

/**
 * Where settlement executions run: Step Functions on AWS (STATE_MACHINE_ARN set by the stack), the
 * in-process runner locally, or nowhere (a context that never starts settlement, such as the ops CLI's).
 */
export type SettlementWorkflow =
  | { kind: 'step-functions'; client: SFNClient; stateMachineArn: string }
  | { kind: 'local'; start: LocalSettlementStarter; ensure: LocalSettlementEnsurer }
  | { kind: 'none' };

export const systemClock: Clock = {
  nowMs: () => Date.now(),
  nowSeconds: () => Math.floor(Date.now() / 1000),
};

/** What the SDK clients' timeouts and retries are built from. */
export type AwsClientConfig = Pick<Config, 'AWS_REGION' | 'AWS_CONNECT_TIMEOUT_MS' | 'AWS_REQUEST_TIMEOUT_MS' | 'AWS_MAX_ATTEMPTS'>;

/**
 * The HTTP handler every AWS SDK client here uses (DynamoDB and Step Functions): bounded connect and request
 * timeouts (the SDK's defaults wait indefinitely for a stalled response), so a dead dependency surfaces as a
 * TimeoutError, which the error mapper answers with 503 and Retry-After. One per client.
 */
export function awsRequestHandler(config: Pick<Config, 'AWS_CONNECT_TIMEOUT_MS' | 'AWS_REQUEST_TIMEOUT_MS'>): NodeHttpHandler {
  return new NodeHttpHandler({
    connectionTimeout: config.AWS_CONNECT_TIMEOUT_MS,
    requestTimeout: config.AWS_REQUEST_TIMEOUT_MS,
    throwOnRequestTimeout: true,
  });
}

/**
 * The DynamoDB document client every store function uses, configured as in production: the configuration's
 * timeouts and attempts (`awsRequestHandler`), wrapNumbers, and undefined attributes dropped; captured by the
 * tracer when one is given (X-Ray segments per call on Lambda).
 */
export function documentClient(config: AwsClientConfig & Pick<Config, 'DYNAMODB_ENDPOINT'>, tracer?: Tracer): DynamoDBDocumentClient {
  const base = new DynamoDBClient({
    region: config.AWS_REGION,
    maxAttempts: config.AWS_MAX_ATTEMPTS,
    requestHandler: awsRequestHandler(config),
    ...(config.DYNAMODB_ENDPOINT && {
      endpoint: config.DYNAMODB_ENDPOINT,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }),
  });
  return wrapDocumentClient(tracer ? tracer.captureAWSv3Client(base) : base);
}

/** Wraps a low-level client (a test's, with fault-injecting middleware) the way the service reads and writes. */
export function wrapDocumentClient(base: DynamoDBClient): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(base, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
    unmarshallOptions: { wrapNumbers: true },
  });
}

export interface ContextOverrides {
  clock?: Clock;
  db?: DynamoDBDocumentClient;
  workflow?: SettlementWorkflow;
  logger?: Logger;
  metrics?: Metrics;
  retry?: Retrying;
  /** The Lambda edge's tracer when tracing is on (`loadTracer`): the context's SDK clients are captured by it. */
  tracer?: Tracer;
}

/**
 * Builds a context from a parsed configuration; the edge passes what it provides itself (a local workflow, a
 * test clock). A configuration naming a state machine needs its workflow passed in: `loadContext` loads it.
 */
export function createContext(config: Config, overrides: ContextOverrides = {}): AppContext {
  const logger = overrides.logger ?? serviceLogger(config);
  const { tracer } = overrides;
  if (config.STATE_MACHINE_ARN && !overrides.workflow) throw new Error('STATE_MACHINE_ARN is set: build the context with loadContext, which loads the Step Functions client');
  const db = overrides.db ?? documentClient(config, tracer);
  const tables = { main: config.TABLE_NAME, ttl: config.TTL_TABLE_NAME };
  return {
    clock: overrides.clock ?? systemClock,
    db,
    tables,
    workflow: overrides.workflow ?? { kind: 'none' },
    kms: config.SECRETS_KMS_KEY_ID ? kmsCipher(config.AWS_REGION, (client) => (tracer ? tracer.captureAWSv3Client(client) : client)) : undefined,
    logger,
    metrics: overrides.metrics ?? serviceMetrics(logger),
    tracer,
    config,
    caches: { apiSecrets: new Map(), webhookSecrets: new Map(), cursorKeys: new WeakMap(), hotAccounts: new Map() },
    retry: overrides.retry ?? { policy: DEFAULT_RETRY_POLICY, timing: realTiming },
    rateLimiter: config.RATE_LIMIT_COUNTER === 'memory' ? memoryRateLimiter() : tableRateLimiter({ db, tables }),
  };
}

/**
 * The context of a deployed function, or of the ops CLI against deployed tables: what the configuration turns
 * on is loaded here, through `import()`s the bundles split off, so a function loads only what it is configured
 * to use: the Powertools Tracer with TRACING=active, the Step Functions client where STATE_MACHINE_ARN names the
 * settlement workflow (the functions that start executions).
 */
export async function loadContext(config: Config, overrides: Omit<ContextOverrides, 'tracer' | 'workflow'> = {}): Promise<AppContext> {
  // Both loaded at once: a cold start waits for the slower, not the sum.
  const [tracer, stepFunctions] = await Promise.all([
    config.TRACING === 'active' ? loadTracer(SERVICE_NAME) : undefined,
    config.STATE_MACHINE_ARN ? import('./settlement/step-functions-workflow.js') : undefined,
  ]);
  const workflow = stepFunctions && config.STATE_MACHINE_ARN ? stepFunctions.stepFunctionsWorkflow(config, config.STATE_MACHINE_ARN, tracer) : undefined;
  return createContext(config, { ...overrides, tracer, workflow });
}

/** A Powertools Logger at the configured level (`silent` included); POWERTOOLS_* variables still apply. */
export function serviceLogger(config: Pick<Config, 'LOG_LEVEL'>): Logger {
  return new Logger({ serviceName: SERVICE_NAME, logLevel: config.LOG_LEVEL.toUpperCase() as 'INFO' });
}

/**
 * The Lambda edge: `bind` makes the function's handler for a context; the context is built from
 * `process.env` on the first invocation and kept for the container's life (one per container, as the SDK
 * clients should be). The local server and tests call `bind` with a context of their own instead.
 */
export function onLambda<E, R>(bind: (ctx: AppContext) => BoundHandler<E, R>): (event: E, context: LambdaContext) => Promise<R> {
  type Handler = (event: E, context: LambdaContext) => Promise<R>;
  let handler: Promise<Handler> | undefined;
  const build = async (): Promise<Handler> => {
    const ctx = await loadContext(parseConfig(process.env));
    // Powertools (logger context, cold-start metric, tracing when on) around every function, API or not.
    return withPowertools(bind(ctx) as (event: E, context: LambdaContext) => Promise<R> | R, ctx);
  };
  return async (event, context) => {
    // A failed start (a bad configuration) is not kept: the next invocation tries again and fails as loudly.
    handler ??= build().catch((error: unknown) => {
      handler = undefined;
      throw error;
    });
    return (await handler)(event, context);
  };
}

/** A bound handler: plain (event, context) or a middy handler, whose context and options are its own. */
type BoundHandler<E, R> = (event: E, context: never, ...rest: never[]) => Promise<R> | R;
