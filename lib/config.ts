import * as z from 'zod/mini';
import { MAX_LEG_SECONDS } from './domain/settlement-leg-limit.js';

/**
 * The kinds of setting, each one schema shared by every setting of its kind. zod builds a schema object for
 * each call (a `.check` or a wrapper makes another), and every Lambda builds this module's schema on its cold
 * start: about 25 fewer objects than one chain per setting, a millisecond or two of each cold start.
 */
const nonEmpty = z.string().check(z.minLength(1));
const positiveInteger = z.coerce.number().check(z.int(), z.positive());
const flag = z.stringbool();

/**
 * Runtime configuration, parsed from the environment once at the edge (the Lambda handler factory, the local
 * runtime, a test) and carried in the context (`lib/context.ts`). The CDK stack sets exactly these variables.
 */
const schema = z.object({
  TABLE_NAME: nonEmpty,
  TTL_TABLE_NAME: nonEmpty,
  AWS_REGION: z._default(nonEmpty, 'us-east-1'),
  /** Set locally (DynamoDB Local); absent on AWS. */
  DYNAMODB_ENDPOINT: z.optional(z.url()),
  /** On AWS, API secrets are encrypted with this KMS key. */
  SECRETS_KMS_KEY_ID: z.optional(nonEmpty),
  /** Locally, a base64 AES-256 key (the local stack keeps one in DATA_DIR). */
  SECRETS_LOCAL_KEY: z.optional(nonEmpty),
  /**
   * On AWS, the Secrets Manager secret holding the HMAC key of list cursors (the stack's generated secret),
   * set on the functions that list; read at run time, not resolved into the environment.
   */
  LIST_CURSOR_SECRET_ARN: z.optional(nonEmpty),
  /** HMAC key of list cursors given directly; unset, it is derived from SECRETS_LOCAL_KEY (the local stack). */
  LIST_CURSOR_KEY: z.optional(z.string().check(z.minLength(32))),
  /**
   * AWS SDK timeouts (DynamoDB and Step Functions): a stalled connection fails after these instead of
   * hanging a request, and the request answers 503 with Retry-After. Worst case per call is about
   * AWS_MAX_ATTEMPTS x (connect + request timeout) plus the SDK's short backoff.
   */
  AWS_CONNECT_TIMEOUT_MS: z._default(positiveInteger, 1000),
  AWS_REQUEST_TIMEOUT_MS: z._default(positiveInteger, 2000),
  AWS_MAX_ATTEMPTS: z._default(positiveInteger, 3),
  /**
   * Connections each SDK client opens at most; calls past it wait in the client for a free one. 50 is the
   * SDK's own default. The tests set fewer: DynamoDB Local serves each table behind one lock and fails a
   * call that waited 10 s for it (a 503 here), so a burst is better queued in the client than inside it.
   */
  AWS_MAX_SOCKETS: z._default(positiveInteger, 50),
  STATE_MACHINE_ARN: z.optional(nonEmpty),
  QUOTE_TTL_SECONDS: z._default(positiveInteger, 30),
  PRICE_MAX_AGE_SECONDS: z._default(positiveInteger, 300),
  SETTLEMENT_SESSION_SECONDS: z._default(positiveInteger, 3600),
  SPOT_SETTLEMENT_DEADLINE_SECONDS: z._default(positiveInteger, 172800),
  /**
   * Length of a settlement leg (one execution). A Standard execution ends after a year and
   * 25,000 history events (a session costs about 11): 30 days keeps hourly sessions near 8,000 events.
   */
  SETTLEMENT_LEG_SECONDS: z._default(
    z.coerce.number().check(z.int(), z.positive(), z.lte(MAX_LEG_SECONDS)),
    30 * 24 * 3600,
  ),
  /**
   * The most records a list's count evaluates when its filters have no stored counter; past it `count` and
   * `total_pages` are null (unknown), so such a count never costs more than this, however long the history.
   */
  LIST_COUNT_BUDGET: z._default(positiveInteger, 10_000),
  /** Overdue trades one settlement sweep invocation revives at most; the next invocation takes the rest. */
  SETTLEMENT_SWEEP_MAX_TRADES: z._default(positiveInteger, 1000),
  /**
   * How long a request waits for its booking in a hot account's queue (group commit) before it answers 503;
   * the booking still commits or is refused once. Well inside API Gateway's 29 s and the functions' timeout.
   */
  HOT_ACCOUNT_WAIT_MS: z._default(positiveInteger, 8000),
  /**
   * Each API key's request rate limit unless ops set one for its platform (`platform limits`), so one
   * platform's burst can't take the others' capacity: `RATE_LIMIT_RPS` sustained requests per second, at most `RATE_LIMIT_BURST` in any one second.
   */
  RATE_LIMIT_RPS: z._default(positiveInteger, 20),
  RATE_LIMIT_BURST: z._default(positiveInteger, 40),
  /**
   * Where requests are counted: `table`, one conditional UpdateItem per request on the TTL table (every Lambda
   * container sees the same count); `memory`, in the process (`npm start`, tests: one process serves all).
   */
  RATE_LIMIT_COUNTER: z._default(z.enum(['table', 'memory']), 'table'),
  /** Webhook URLs may point at loopback and private addresses (`npm start` and tests; never deployed). */
  WEBHOOK_ALLOW_PRIVATE_URLS: z._default(flag, false),
  /** Webhook URLs may be plain http (`npm start` and tests); deployed stacks accept https only. */
  WEBHOOK_ALLOW_HTTP: z._default(flag, false),
  /** Seconds between webhook delivery attempts, comma-separated; empty for the design's schedule. */
  WEBHOOK_RETRY_SCHEDULE_SECONDS: z.optional(z.string()),
  /** On AWS, the SQS queue webhook deliveries wait in. */
  WEBHOOK_QUEUE_URL: z.optional(nonEmpty),
  LOG_LEVEL: z._default(z.enum(['debug', 'info', 'warn', 'error', 'silent']), 'info'),
  /**
   * `active`: the Lambda edge loads the Powertools Tracer (X-Ray), as the stack sets with active tracing.
   * Off otherwise: the X-Ray SDK installs an async hook as soon as it is imported, which makes every promise
   * of the process about ten times dearer, so it is never imported where nothing is traced.
   */
  TRACING: z._default(z.enum(['active', 'off']), 'off'),
});

export type Config = z.infer<typeof schema>;

/** Parses the service's configuration from `env` (normally `process.env`), failing fast on a bad value. */
export function parseConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`invalid configuration: ${problems.join('; ')}`);
  }
  if (!parsed.data.SECRETS_KMS_KEY_ID && !parsed.data.SECRETS_LOCAL_KEY) {
    throw new Error('invalid configuration: set SECRETS_KMS_KEY_ID (AWS) or SECRETS_LOCAL_KEY (local)');
  }
  if (parsed.data.RATE_LIMIT_BURST < parsed.data.RATE_LIMIT_RPS) {
    throw new Error('invalid configuration: RATE_LIMIT_BURST must be at least RATE_LIMIT_RPS');
  }
  return parsed.data;
}
