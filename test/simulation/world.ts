import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Logger } from '@aws-lambda-powertools/logger';
import { ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AppContext, Clock } from '../../lib/context.js';
import { awsRequestHandler, wrapDocumentClient } from '../../lib/runtime/aws-clients.js';
import { SERVICE_NAME } from '../../lib/observability/metric-names.js';
import { createContext } from '../../lib/edge.js';
import { localClient } from '../../infra/local/dynamodb.js';
import { localConfig } from '../../infra/local/local-env.js';
import { DEFAULT_RETRY_POLICY, realTiming } from '../../lib/runtime/retry-policy.js';
import type { FaultInjector } from './faults.js';
import { keyedDraw } from './prng.js';
import { IndexLag } from '../../infra/local/index-lag.js';
import { attachDynamoDbLimits } from '../../infra/local/dynamodb-limits.js';

/** The most a new item takes to show in index reads (SIM_INDEX_LAG_MS, ms); 1.5 s unless set. */
export const SIM_INDEX_LAG_MS = Number(process.env.SIM_INDEX_LAG_MS ?? 1_500);

/** DynamoDB calls (attempts) in flight, when SIM_SLOW asks for stall reports. */
export const inFlight = new Set<{ command: string; startedMs: number; input: unknown }>();

/**
 * The simulation's context: a configuration like `npm start`'s on the simulation's own tables, with short
 * settlement sessions and deadlines (so trades finish within a run), quick webhook retries, prices that stay
 * fresh for the run, and a DynamoDB client carrying the fault injector's middleware. The clock is the run's,
 * which the drain moves on (`Run.drain`).
 */
export function simulationContext(
  endpoint: string,
  tables: { main: string; ttl: string },
  faults: FaultInjector,
  clock: Clock,
): AppContext {
  const config = localConfig(endpoint, tables, randomBytes(32).toString('base64'), {
    LOG_LEVEL: process.env.SIM_LOG_LEVEL ?? 'silent',
    SETTLEMENT_SESSION_SECONDS: '1',
    SPOT_SETTLEMENT_DEADLINE_SECONDS: '4',
    PRICE_MAX_AGE_SECONDS: '86400',
    WEBHOOK_RETRY_SCHEDULE_SECONDS: '1,1,1,2,2,2,3,3,3',
    // Per-key rate limits are not what is under test here (as in the tests' context): each platform's
    // client runs many requests at once.
    RATE_LIMIT_RPS: '1000',
    RATE_LIMIT_BURST: '1000',
    // DynamoDB Local on a loaded 2-core machine answers slower than DynamoDB (as in the tests' context).
    AWS_CONNECT_TIMEOUT_MS: '10000',
    AWS_REQUEST_TIMEOUT_MS: '30000',
    // DynamoDB Local's lock timeout under load (InternalServerError), which DynamoDB does not have: the SDK
    // retries it (as in the tests' context). Faults are injected inside those attempts all the same.
    AWS_MAX_ATTEMPTS: '6',
  });
  const base = new DynamoDBClient({
    region: config.AWS_REGION,
    endpoint,
    maxAttempts: config.AWS_MAX_ATTEMPTS,
    requestHandler: awsRequestHandler(config),
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  // At `deserialize`, inside the SDK's retry loop: every attempt is a place a fault may fall.
  base.middlewareStack.add(faults.middleware(), { step: 'deserialize', name: 'simulationFaults' });
  // New items show in index reads late, as on AWS (up to SIM_INDEX_LAG_MS, drawn from the seed per item), and
  // DynamoDB's limits the local stack adds (infra/local/index-lag.ts, dynamodb-limits.ts).
  new IndexLag({ lagOf: (place) => Math.floor(keyedDraw(faults.seed, place) * SIM_INDEX_LAG_MS) }).attach(base);
  attachDynamoDbLimits(base, tables);
  if (process.env.SIM_SLOW)
    base.middlewareStack.add(
      (next, context) => async (args) => {
        const call = { command: context.commandName ?? '?', startedMs: Date.now(), input: args.input };
        inFlight.add(call);
        try {
          return await next(args);
        } finally {
          inFlight.delete(call);
        }
      },
      { step: 'finalizeRequest', name: 'simulationInFlight' },
    );
  return createContext(config, {
    clock,
    db: wrapDocumentClient(base),
    logger: new RecordingLogger(config.LOG_LEVEL, (line) => faults.noteError(line)),
    // Production's policy with the tests' longer time bound (DynamoDB Local under load, see test/support/context.ts).
    retry: { policy: { ...DEFAULT_RETRY_POLICY, maxElapsedMs: 60_000 }, timing: realTiming },
  });
}

/**
 * The service's logger, which also hands every error line to the simulation (whatever the log level), so a
 * violation can show what the server said about its own 5xx.
 */
class RecordingLogger extends Logger {
  constructor(
    level: string,
    private readonly sink: (line: string) => void,
  ) {
    super({ serviceName: SERVICE_NAME, logLevel: level.toUpperCase() as 'INFO' });
  }

  override error(...[input, ...extra]: Parameters<Logger['error']>): void {
    this.sink(inspect([input, ...extra], { depth: 6, breakLength: Number.POSITIVE_INFINITY }));
    super.error(input, ...extra);
  }
}

/** A client without faults, for the checks after the run. */
export function cleanClient(endpoint: string): DynamoDBDocumentClient {
  return wrapDocumentClient(localClient(endpoint));
}

/** Every item of the table, page by page (the simulation's table only holds the run's data). */
export async function* scanTable(db: DynamoDBDocumentClient, table: string): AsyncGenerator<Record<string, any>> {
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await db.send(new ScanCommand({ TableName: table, ExclusiveStartKey }));
    yield* page.Items ?? [];
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
}

/** A valid POST /participants/customers/new body (an adult in Illinois), screened a minute before `nowMs`. */
export function customerBody(email: string, nowMs: number): Record<string, unknown> {
  return {
    first_name: 'Sim',
    last_name: 'Ulation',
    email,
    address_one: '1 Navy Way',
    city: 'Springfield',
    state: 'IL',
    zip: '62701',
    country: 'United States',
    date_of_birth: '1970-12-09',
    id_number_type: 'non_in_passport',
    id_number: 'P7654321',
    signed_timestamp: nowMs - 60_000,
  };
}
