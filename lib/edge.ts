import type { Context as LambdaContext } from 'aws-lambda';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { parseConfig, type Config } from './config.js';
import { systemClock, type AppContext, type Clock } from './context.js';
import { memoryRateLimiter } from './domain/rate-limits.js';
import { loadTracer, withPowertools } from './observability/lambda-edge.js';
import { SERVICE_NAME } from './observability/metric-names.js';
import { serviceMetrics } from './observability/metrics.js';
import { documentClient, serviceLogger } from './runtime/aws-clients.js';
import { cursorKeyProvider } from './runtime/cursor-key.js';
import { Deadlines, remainingTimeOf } from './runtime/deadline.js';
import { kmsCipher } from './runtime/kms.js';
import { DEFAULT_RETRY_POLICY, realTiming, type Retrying } from './runtime/retry-policy.js';
import { NO_SETTLEMENT_WORKFLOW, type SettlementWorkflow } from './runtime/settlement-workflow.js';
import { tableRateLimiter } from './store/rate-limits.js';

/**
 * The edge of the service: where a context is built (for a Lambda from `process.env`, for `npm start`, the
 * ops CLI and tests from what they pass) and a function's handler bound to it. The top of lib/: it wires the
 * store's adapters (the rate limiter's table) into the context every layer below takes as a parameter.
 */

interface ContextOverrides {
  clock?: Clock;
  db?: DynamoDBDocumentClient;
  workflow?: SettlementWorkflow;
  logger?: Logger;
  metrics?: Metrics;
  retry?: Retrying;
  /** The Lambda edge's tracer when tracing is on (`loadTracer`): the context's SDK clients are captured by it. */
  tracer?: Tracer;
  /** The deadlines the context's clients are built with (`loadContext` builds the Step Functions client first). */
  deadlines?: Deadlines;
}

/**
 * Builds a context from a parsed configuration; the edge passes what it provides itself (a local workflow, a
 * test clock). A configuration naming a state machine needs its workflow passed in: `loadContext` loads it.
 */
export function createContext(config: Config, overrides: ContextOverrides = {}): AppContext {
  const logger = overrides.logger ?? serviceLogger(config);
  const { tracer } = overrides;
  if (config.STATE_MACHINE_ARN && !overrides.workflow)
    throw new Error(
      'STATE_MACHINE_ARN is set: build the context with loadContext, which loads the Step Functions client',
    );
  const deadlines = overrides.deadlines ?? new Deadlines();
  const db = overrides.db ?? documentClient(config, tracer, deadlines);
  const tables = { main: config.TABLE_NAME, ttl: config.TTL_TABLE_NAME };
  return {
    clock: overrides.clock ?? systemClock,
    db,
    tables,
    workflow: overrides.workflow ?? NO_SETTLEMENT_WORKFLOW,
    kms: config.SECRETS_KMS_KEY_ID
      ? kmsCipher(config, (client) => (tracer ? tracer.captureAWSv3Client(client) : client), deadlines)
      : undefined,
    logger,
    metrics: overrides.metrics ?? serviceMetrics(logger),
    tracer,
    config,
    caches: {
      apiSecrets: new Map(),
      apiKeys: new Map(),
      accountRefs: new Map(),
      customerCodes: new Map(),
      participantPlatforms: new Map(),
      accountStates: new Map(),
      bookingsInFlight: new Map(),
      webhookSecrets: new Map(),
      hotAccounts: new Map(),
      migrations: new Map(),
    },
    retry: overrides.retry ?? { policy: DEFAULT_RETRY_POLICY, timing: realTiming },
    deadlines,
    rateLimiter: config.RATE_LIMIT_COUNTER === 'memory' ? memoryRateLimiter() : tableRateLimiter({ db, tables }),
    cursorKey: cursorKeyProvider(config, (client) => (tracer ? tracer.captureAWSv3Client(client) : client), deadlines),
  };
}

/**
 * The context of a deployed function, or of the ops CLI against deployed tables: what the configuration turns
 * on is loaded here, through `import()`s the bundles split off, so a function loads only what it is configured
 * to use: the Powertools Tracer with TRACING=active, the Step Functions client where STATE_MACHINE_ARN names the
 * settlement workflow (the functions that start executions).
 */
export async function loadContext(
  config: Config,
  overrides: Omit<ContextOverrides, 'tracer' | 'workflow' | 'deadlines'> = {},
): Promise<AppContext> {
  const deadlines = new Deadlines();
  // Both loaded at once: a cold start waits for the slower, not the sum.
  const [tracer, stepFunctions] = await Promise.all([
    config.TRACING === 'active' ? loadTracer(SERVICE_NAME) : undefined,
    config.STATE_MACHINE_ARN ? import('./runtime/step-functions-workflow.js') : undefined,
  ]);
  const workflow =
    stepFunctions && config.STATE_MACHINE_ARN
      ? stepFunctions.stepFunctionsWorkflow(config, config.STATE_MACHINE_ARN, tracer, deadlines)
      : undefined;
  return createContext(config, { ...overrides, tracer, workflow, deadlines });
}

/**
 * The Lambda edge: `bind` makes the function's handler for a context; the context is built from
 * `process.env` on the first invocation and kept for the container's life (one per container, as the SDK
 * clients should be). The local server and tests call `bind` with a context of their own instead.
 */
export function onLambda<E, R>(
  bind: (ctx: AppContext) => BoundHandler<E, R>,
): (event: E, context: LambdaContext) => Promise<R> {
  type Handler = (event: E, context: LambdaContext) => Promise<R>;
  let handler: Promise<Handler> | undefined;
  const build = async (): Promise<Handler> => {
    const ctx = await loadContext(parseConfig(process.env));
    // Powertools (logger context, cold-start metric, tracing when on) around every function, API or not.
    const bound = await withPowertools(bind(ctx) as (event: E, context: LambdaContext) => Promise<R> | R, ctx);
    // Every function's waits end before its invocation does (an API handler sets the same deadline itself).
    return async (event, context) => ctx.deadlines.within(remainingTimeOf(context), async () => bound(event, context));
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
