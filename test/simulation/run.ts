import { parseArgs } from 'node:util';

/**
 * `npm run simulate -- --seed N --ops 10000`: the seeded simulation. Exit 0 when every
 * invariant held, 1 when one broke (the seed, the operation and the faults so far are printed: run the same
 * command to replay it), 2 on a usage error.
 */

// EMF metric lines on stdout would bury the report; the SDK's Node-version notice is about Lambda.
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const USAGE =
  'usage: npm run simulate -- --seed N --ops COUNT [--concurrency C]  (N: integer 0..4294967295; COUNT: 1..1000000; C: 1..64, default 12)';

function usage(problem: string): never {
  console.error(`simulate: ${problem}\n${USAGE}`);
  process.exit(2);
}

function integer(name: string, text: string | undefined, min: number, max: number): number {
  if (text === undefined) usage(`--${name} is required`);
  if (!/^\d+$/.test(text)) usage(`--${name} must be a whole number, got '${text}'`);
  const value = Number(text);
  if (value < min || value > max) usage(`--${name} must be between ${min} and ${max}, got ${text}`);
  return value;
}

// Ctrl-C or SIGTERM: exit, which stops the run's DynamoDB Local (driver.ts kills it on exit).
process.once('SIGINT', () => process.exit(130));
process.once('SIGTERM', () => process.exit(143));

async function main(): Promise<void> {
  let values: Record<string, string | undefined>;
  try {
    ({ values } = parseArgs({
      args: process.argv.slice(2),
      strict: true,
      allowPositionals: false,
      options: { seed: { type: 'string' }, ops: { type: 'string' }, concurrency: { type: 'string' } },
    }) as { values: Record<string, string | undefined> });
  } catch (error) {
    usage((error as Error).message);
  }
  const seed = integer('seed', values.seed, 0, 4294967295);
  const ops = integer('ops', values.ops, 1, 1_000_000);
  const concurrency = values.concurrency === undefined ? 12 : integer('concurrency', values.concurrency, 1, 64);
  // Imported once the arguments hold: the driver loads the whole service (seconds), which a usage error needn't.
  const { simulate, SimulationFailure } = await import('./driver.js');
  try {
    const summary = await simulate({ seed, ops, concurrency, log: (line) => console.error(line) });
    console.log(JSON.stringify(summary, null, 2));
    console.error(`seed ${seed}: passed, ${ops} operations in ${(summary.elapsed_ms / 1000).toFixed(1)} s`);
    process.exit(0);
  } catch (error) {
    if (error instanceof SimulationFailure) {
      console.log(JSON.stringify(error.summary, null, 2));
      console.error(error.message);
      process.exit(1);
    }
    console.error(`simulate: seed ${seed}: ${(error as Error).stack ?? error}`);
    process.exit(1);
  }
}

void main();
