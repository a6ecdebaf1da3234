import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { build, type Metafile } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { ENTRY_FILE, esbuildOptionsFor } from '../../infra/bundling.js';
import { PROJECT_ROOT, ServiceFunction, type ServiceEnvironment } from '../../infra/service-function.js';
import { answersRetries } from '../../lib/http/middleware/verify-signature.js';
import { routes } from '../../lib/routes.js';
import { functionEntries } from '../bench/bundles.js';
import { loadedAtImport } from '../support/bundle-graph.js';
import { byProfile } from '../support/profile.js';

/**
 * What a function's cold start compiles: its bundle's entry file and the chunks it imports statically. The
 * Tracer (X-Ray SDK), the KMS, Step Functions and Secrets Manager clients (with Powertools Parameters), the
 * response schemas, the hot-account path and the phone parser sit behind `import()`s and
 * must stay there: a static import of any of them anywhere in a function's module graph would put it back in
 * every import of that function, silently (the benchmark would show it, the tests would not).
 */
const outDirs: string[] = [];
afterAll(() => outDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/**
 * Each handler built once per file: the size test builds again three handlers the tests above read (report-trade,
 * create-transfer, get-time), with the same options and so the same bundle; building is
 * where the file spends its time.
 */
const bundles = new Map<string, ReturnType<typeof buildBundle>>();
function bundleOf(handler: string) {
  let bundle = bundles.get(handler);
  if (!bundle) bundles.set(handler, (bundle = buildBundle(handler)));
  return bundle;
}

async function buildBundle(handler: string) {
  const outDir = mkdtempSync(join(tmpdir(), 'bundle-test-'));
  outDirs.push(outDir);
  const { metafile } = await build({
    ...esbuildOptionsFor(join(PROJECT_ROOT, handler), outDir),
    metafile: true,
    logLevel: 'silent',
  });
  const entry = Object.keys(metafile.outputs).find((file) => resolve(file) === join(outDir, ENTRY_FILE))!;
  const loaded = loadedAtImport(metafile, entry);
  return {
    metafile,
    loaded,
    atImport: inputsOf(metafile, loaded),
    all: inputsOf(metafile, Object.keys(metafile.outputs)),
  };
}

const inputsOf = (metafile: Metafile, outputs: string[]) =>
  outputs.flatMap((output) => Object.keys(metafile.outputs[output]!.inputs));

const DEFERRED = {
  // The Tracer and its middy middleware, with the copy of Powertools' commons they bring
  // (lib/observability/lambda-edge.ts).
  tracer: 'node_modules/@aws-lambda-powertools/tracer/',
  xray: 'node_modules/aws-xray-sdk-core/',
  kms: 'node_modules/@aws-sdk/client-kms/',
  stepFunctions: 'node_modules/@aws-sdk/client-sfn/',
  // The cursor key's secret, read by lists on their first page (lib/runtime/cursor-key.ts).
  secretsManager: 'node_modules/@aws-sdk/client-secrets-manager/',
  parameters: 'node_modules/@aws-lambda-powertools/parameters/',
  responseSchemas: 'lib/http/schemas/',
  // A hot account's group commit (queue, lease, commit rounds, waiters), loaded by the booking engine on a
  // container's first contention (lib/ledger/engine.ts); create-transfer's bundle books, so it checks this.
  hotAccounts: 'lib/ledger/hot-account.ts',
};
const holding = (inputs: string[], part: string) => inputs.some((input) => input.includes(part));
const BOOKING_CLAIMS = 'lib/http/booking-claims.ts';

describe('function bundles (infra/bundling.ts, as the stack builds them)', () => {
  it('import neither the tracer, the KMS, Step Functions and Secrets Manager clients, the response schemas nor the hot-account path, and still carry them for later', async () => {
    // A signed route that encrypts a secret, one that books, a list, and the unsigned clock.
    for (const handler of [
      'functions/webhooks/create-endpoint.ts',
      'functions/transfers/create-transfer.ts',
      'functions/transfers/list-transfers.ts',
      'functions/system/get-time.ts',
    ]) {
      const { atImport, all, metafile, loaded } = await bundleOf(handler);
      // The function's own row of the route table, not the table (lib/routes.ts): about 0.3 KiB with the helper
      // that builds a row, where the table's 42 rows were 3 KiB.
      const routeTableBytes = loaded.reduce(
        (sum, output) => sum + (metafile.outputs[output]!.inputs['lib/routes.ts']?.bytesInOutput ?? 0),
        0,
      );
      expect(routeTableBytes, `${handler}'s bytes of lib/routes.ts`).toBeLessThan(512);
      for (const [name, part] of Object.entries(DEFERRED)) {
        expect(holding(atImport, part), `${handler} imports ${name}`).toBe(false);
        // The hot-account path only where the function books; a function that never books doesn't carry it.
        const carried = name !== 'hotAccounts' || handler === 'functions/transfers/create-transfer.ts';
        expect(holding(all, part), `${handler} can load ${name}`).toBe(carried);
      }
      // A booking's claims (lib/http/booking-claims.ts) only where the route passes them in (`claimsInBooking`):
      // the middleware names their type alone.
      expect(holding(all, BOOKING_CLAIMS), `${handler} carries the booking claims`).toBe(
        handler === 'functions/transfers/create-transfer.ts',
      );
    }
  }, 60_000);

  it('import the phone parser with its metadata only when a customer body carries a phone number', async () => {
    const { atImport, all } = await bundleOf('functions/participants/create-customer.ts');
    for (const part of [
      'node_modules/libphonenumber-js/',
      'lib/domain/phone-metadata.json',
      'lib/domain/phone-numbers.ts',
    ]) {
      expect(holding(atImport, part), `create-customer imports ${part}`).toBe(false);
      expect(holding(all, part), `create-customer can load ${part}`).toBe(true);
    }
  }, 60_000);

  it('import the Step Functions client where the use case starts settlement executions, and the tracer there only later', async () => {
    const { atImport, all } = await bundleOf('functions/trades/report-trade.ts');
    expect(holding(atImport, DEFERRED.stepFunctions)).toBe(true);
    expect(holding(atImport, DEFERRED.tracer) || holding(atImport, DEFERRED.xray)).toBe(false);
    expect(holding(all, DEFERRED.xray)).toBe(true);
    // The attempt task starts no execution (the stack names no state machine in its configuration): its import
    // leaves the client out, though it shares the settlement modules.
    const attempt = await bundleOf('functions/settlement/attempt-settlement.ts');
    expect(holding(attempt.atImport, DEFERRED.stepFunctions)).toBe(false);
  }, 60_000);
});

/**
 * The idempotency middleware does not import the booking engine (its `IdempotencyOptions`): a route that books
 * passes `driveQueuedBooking` as its handler's `queuedBookings`, so that a retry of a booking left queued commits
 * the queue. Only such a route can meet one (the request hash holds the route); one that books and did not pass
 * it would answer the retry 503 until the queue moved on. The function files that pass it import the engine
 * themselves (the type checker and the linter keep an import used).
 */
describe('routes that book', () => {
  it('pass the engine to the idempotency middleware, and only they import it in their own file', async () => {
    const handlers = [
      ...new Set(routes.filter((route) => answersRetries(route.method, route)).map((route) => route.handler)),
    ];
    const { metafile } = await build({
      entryPoints: handlers.map((handler) => join(PROJECT_ROOT, handler)),
      bundle: true,
      write: false,
      metafile: true,
      outdir: join(tmpdir(), 'routes-that-book'),
      platform: 'node',
      format: 'esm',
      packages: 'external',
      logLevel: 'silent',
    });
    const engine = 'lib/ledger/engine.ts';
    const reachesEngine = (file: string) => {
      const seen = new Set<string>();
      const pending = [file];
      for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
        if (seen.has(next)) continue;
        seen.add(next);
        for (const imported of metafile.inputs[next]?.imports ?? [])
          if (imported.kind === 'import-statement' && !imported.external) pending.push(imported.path);
      }
      return seen.has(engine);
    };
    const booking = handlers.filter(reachesEngine);
    expect(booking).toContain('functions/transfers/create-transfer.ts');
    expect(handlers.filter((handler) => metafile.inputs[handler]!.imports.some((i) => i.path === engine))).toEqual(
      booking,
    );
  }, 60_000);
});

/**
 * The bundles are built without esbuild's `keepNames`, so a class's own name is minified away; an error's
 * `name`, which the logs show (`error_kind`, the first line of a stack), is only ever what its class sets.
 * Every error class the functions can throw sets it, as `lib/domain/errors.ts` does.
 */
describe('error classes bundled into functions', () => {
  it('each set their name, so minification leaves it readable in the logs', () => {
    const sources = ['lib', 'functions'].flatMap((dir) =>
      readdirSync(join(PROJECT_ROOT, dir), { recursive: true, encoding: 'utf8' })
        .filter((file) => file.endsWith('.ts'))
        .map((file) => join(PROJECT_ROOT, dir, file)),
    );
    const errorClasses = sources.flatMap((file) => {
      const source = readFileSync(file, 'utf8');
      return [...source.matchAll(/class (\w+) extends (\w*Error)\b/g)].map(([, name]) => ({ name: name!, source }));
    });
    expect(errorClasses.length).toBeGreaterThan(30);
    const unnamed = errorClasses
      .filter(({ name, source }) => !new RegExp(`name = '${name}';`).test(source))
      .map(({ name }) => name);
    expect(unnamed, 'error classes that leave `name` to the minifier').toEqual([]);
  });
});

describe('function assets (ServiceFunction, bundling on as in `cdk synth`)', () => {
  it('gives each function its own bundle: entry file, chunks, and the files its handler reads beside them', () => {
    const outdir = mkdtempSync(join(tmpdir(), 'assets-test-'));
    outDirs.push(outdir);
    const app = new App({ outdir });
    const stack = new Stack(app, 'Assets');
    // Values are never read: this synthesizes the functions' code, not a working stack.
    const environment = { TABLE_NAME: 'main', TTL_TABLE_NAME: 'windows' } as ServiceEnvironment;
    const handlers = [
      'functions/system/get-time.ts',
      'functions/transfers/create-transfer.ts',
      'functions/docs/get-docs-script.ts',
    ];
    handlers.forEach((handler, i) => new ServiceFunction(stack, `Function${i}`, { handler, environment }));
    const functions = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function'));
    expect(functions.map((fn) => fn.Properties.Handler)).toEqual(['index.handler', 'index.handler', 'index.handler']);
    expect(new Set(functions.map((fn) => JSON.stringify(fn.Properties.Code))).size).toBe(3);

    const assets = readdirSync(outdir)
      .filter((name) => name.startsWith('asset.'))
      .map((name) => join(outdir, name));
    expect(assets).toHaveLength(3);
    const entries = assets.map((dir) => readFileSync(join(dir, 'index.mjs'), 'utf8'));
    expect(new Set(entries).size).toBe(3);
    expect(assets.every((dir) => readdirSync(join(dir, 'chunks')).length > 0)).toBe(true);
    expect(assets.filter((dir) => existsSync(join(dir, 'redoc.standalone.js')))).toHaveLength(1);
  }, 120_000);
});

/**
 * bundle_kb_max (docs/performance.md): what a cold start compiles stays within 400 KiB for every function the stack
 * deploys (the benchmark's list: every route, workflow task and event handler). The bytes are the benchmark's
 * (`test/bench/bundles.ts`): the entry file and the chunks it imports statically.
 */
const MAX_KIB = 400;

/**
 * The heaviest functions, each held to its present size so that the room under MAX_KIB is not spent unnoticed: a
 * row is raised only by a commit that says what the bytes buy. Every function loads about 305 KiB before any rule
 * of its own (the DynamoDB client and the SDK core, zod, Powertools' logger and metrics, middy, the middleware and
 * the store's entity layer); what each row adds is said beside it.
 */
const PINNED_KIB: Record<string, number> = {
  // The trade rules with decimal.js (31 KiB), and the Step Functions client (24 KiB), which every
  // report uses to start its settlement execution; it is imported with the function's code
  // (lib/settlement/start-settlement.ts) so that a cold start compiles it in Lambda's init phase, which runs on
  // unthrottled CPU, rather than in the first request at the function's share of a vCPU.
  'functions/trades/report-trade.ts': 399.7,
  // The booking engine with decimal.js, and the award rules and their store.
  'functions/awards/distribute-awards.ts': 394.5,
  'functions/awards/fund-awards.ts': 393,
  // The booking engine with decimal.js, and the trade, quote and withdrawal rules. The quote executions, rewards
  // and award funding (like create-transfer) bring the booking claims they pass to the middleware
  // (lib/http/booking-claims.ts, about 2.5 KiB).
  'functions/convert-withdraw/execute-quote.ts': 391.6,
  'functions/liquidity/execute-quote.ts': 392.2,
  'functions/rewards/issue-reward.ts': 392.3,
  // The minor's customer rules with the country tables (12 KiB), without the adult's fields.
  'functions/participants/create-minor.ts': 350.6,
};

describe('function bundle sizes (infra/bundling.ts, every deployed function)', () => {
  it(`keep what importing a function loads within ${MAX_KIB} KiB (the heaviest within their present size)`, async () => {
    const all = functionEntries(PROJECT_ROOT);
    expect(all.length).toBeGreaterThan(40);
    // Building every function takes esbuild a minute or more of both cores: `npm test` builds the pinned ones (the
    // heaviest, which any import shared by all functions reaches first) and three light ones; `npm run test:long`
    // and the benchmark (`bundle_kb_max`) build every one.
    const handlers = byProfile(
      [
        ...Object.keys(PINNED_KIB),
        'functions/system/get-time.ts',
        'functions/transfers/create-transfer.ts',
        'functions/accounts/list-accounts.ts',
      ].filter((handler) => all.includes(handler)),
      all,
    );
    expect(handlers.length).toBeGreaterThanOrEqual(byProfile(10, 40));
    const sizes: Record<string, number> = {};
    // esbuild builds on threads of its own: a few at a time keeps the two cores busy without crowding them.
    for (let i = 0; i < handlers.length; i += 4) {
      await Promise.all(
        handlers.slice(i, i + 4).map(async (handler) => {
          const { metafile, loaded } = await bundleOf(handler);
          sizes[handler] =
            Math.round((loaded.reduce((sum, file) => sum + metafile.outputs[file]!.bytes, 0) / 1024) * 10) / 10;
        }),
      );
    }
    const over = Object.entries(sizes).filter(([handler, kib]) => kib > (PINNED_KIB[handler] ?? MAX_KIB));
    expect(
      over,
      `bundles over ${MAX_KIB} KiB (or over their pinned size, for PINNED_KIB's): KiB at import ${JSON.stringify(over)}`,
    ).toEqual([]);
  }, 300_000);
});
