import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { ENTRY_FILE, esbuildOptionsFor } from '../../infra/bundling.js';
import { routes } from '../../infra/routes.js';
import { loadedAtImport } from '../support/bundle-graph.js';
import { median } from './stats.js';

export const IMPORT_RUNS = 15;

export interface BundleResult {
  handler: string;
  /** What importing the function loads: the entry file and the chunks it imports statically. */
  kb: number;
  /** The whole bundle: with the chunks only an `import()` loads (the Tracer's, the KMS client's...). */
  totalKb: number;
  importMsP50: number;
  importCpuMsP50: number;
  /**
   * Import plus the chunks a deployed function loads by its first request at the latest: the Tracer
   * (the stack sets TRACING=active), and the KMS and Step Functions clients where the bundle has them. What
   * code splitting defers rather than saves shows here.
   */
  firstRequestMsP50: number;
  /** The three largest packages (or `src` for our own code) in the bundle, for the report. */
  heaviest: string;
}

/** The repository root: handler paths are relative to it. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Every Lambda the stack deploys: one per route, plus the functions that are not routes (workflow tasks,
 * event handlers, the sweep). Those all live under `functions/` by the layout's rule, so the directory is
 * the list, with the route table's handlers added in case one lives elsewhere.
 */
export function functionEntries(root: string): string[] {
  const inFunctions = readdirSync(resolve(root, 'functions'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => `functions/${file.split(sep).join('/')}`);
  const handlers = [...routes.map((route) => route.handler), ...inFunctions.sort()];
  return [...new Set(handlers)].filter((handler) => existsSync(resolve(root, handler)));
}

function heaviestPackages(metafile: Metafile, outputs: string[]): string {
  const byPackage = new Map<string, number>();
  for (const output of outputs) {
    for (const [input, { bytesInOutput }] of Object.entries(metafile.outputs[output]!.inputs)) {
      const name = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input)?.[1] ?? 'src';
      byPackage.set(name, (byPackage.get(name) ?? 0) + bytesInOutput);
    }
  }
  return [...byPackage]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([name, bytes]) => `${name} ${(bytes / 1024).toFixed(0)}`)
    .join(', ');
}

/** The packages whose chunks a deployed function loads by its first request, where its bundle has them. */
const FIRST_REQUEST_PACKAGES = ['@aws-lambda-powertools/tracer', '@aws-sdk/client-kms', '@aws-sdk/client-sfn'];

/** The chunks reached by `import()` that hold one of `FIRST_REQUEST_PACKAGES`, with what they import statically. */
function firstRequestChunks(metafile: Metafile, loaded: string[]): string[] {
  const chunks = Object.entries(metafile.outputs)
    .filter(
      ([file, output]) =>
        !loaded.includes(file) &&
        Object.keys(output.inputs).some((input) =>
          FIRST_REQUEST_PACKAGES.some((name) => input.includes(`node_modules/${name}/`)),
        ),
    )
    .map(([file]) => file);
  return [...new Set(chunks.flatMap((chunk) => loadedAtImport(metafile, chunk)))].filter(
    (file) => !loaded.includes(file),
  );
}

/** Sizes and heaviest packages of a build's outputs, for the report: what import loads, and everything. */
function describeBuild(metafile: Metafile, outDir: string) {
  const entryFile = Object.keys(metafile.outputs).find((file) => resolve(file) === join(outDir, ENTRY_FILE));
  if (!entryFile) throw new Error(`no ${ENTRY_FILE} in ${outDir}`);
  const loaded = loadedAtImport(metafile, entryFile);
  const kb = (files: string[]) => files.reduce((sum, file) => sum + metafile.outputs[file]!.bytes, 0) / 1024;
  return {
    file: join(outDir, ENTRY_FILE),
    firstRequestFiles: firstRequestChunks(metafile, loaded).map((file) => resolve(file)),
    kb: kb(loaded),
    totalKb: kb(Object.keys(metafile.outputs)),
    heaviest: heaviestPackages(metafile, loaded),
  };
}

/**
 * Milliseconds a fresh `node` spends in `import()` of `file`, as a Lambda's init phase would: the clock
 * starts after Node itself is up, so only loading and evaluating the bundle (and what it imports) counts.
 * Also the CPU time the process used meanwhile (all its threads), which other load on the machine inflates
 * far less than the wall time, and the time by which the `then` chunks were loaded too, one after another.
 */
function importOnce(file: string, cwd: string, then: string[] = []): { wallMs: number; cpuMs: number; thenMs: number } {
  const href = (path: string) => JSON.stringify(pathToFileURL(path).href);
  const script = [
    'const cpu = process.cpuUsage(); const t = performance.now();',
    `await import(${href(file)});`,
    'const wall = performance.now() - t; const used = process.cpuUsage(cpu);',
    ...then.map((chunk) => `await import(${href(chunk)});`),
    'process.stdout.write(`${wall} ${(used.user + used.system) / 1000} ${performance.now() - t}`);',
  ].join(' ');
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd,
    encoding: 'utf8',
    // The variables the stack sets, so nothing evaluated at import time trips over a missing one.
    env: {
      PATH: process.env.PATH,
      AWS_REGION: 'us-east-1',
      TABLE_NAME: 'bench-main',
      TTL_TABLE_NAME: 'bench-windows',
      SECRETS_LOCAL_KEY: Buffer.alloc(32).toString('base64'),
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    timeout: 30_000,
  });
  const [wallMs, cpuMs, thenMs] = run.stdout.split(' ').map(Number);
  if (run.status !== 0 || ![wallMs, cpuMs, thenMs].every(Number.isFinite))
    throw new Error(`importing ${file} failed:\n${run.stderr}`);
  return { wallMs: wallMs!, cpuMs: cpuMs!, thenMs: thenMs! };
}

export interface BundleWorkspace {
  dir: string;
  dispose(): void;
}

/**
 * A scratch directory outside the repository for the bundles. What a bundle leaves external is resolved
 * from the repository's packages through a `node_modules` link (ES modules ignore NODE_PATH).
 */
export function bundleWorkspace(root: string): BundleWorkspace {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  symlinkSync(resolve(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return { dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Bundles `handler` with the stack's options (or `overrides`) into the workspace; returns entry file and sizes. */
export async function bundle(
  root: string,
  workspace: BundleWorkspace,
  handler: string,
  tag = 'stack',
  overrides: { external?: string[] } = {},
) {
  const outDir = join(workspace.dir, tag, handler.replace(/\.ts$/, '').replace(/[/\\]/g, '_'));
  mkdirSync(outDir, { recursive: true });
  const options = esbuildOptionsFor(resolve(root, handler), outDir);
  const result = await build({
    ...options,
    external: [...(options.external ?? []), ...(overrides.external ?? [])],
    metafile: true,
  });
  return describeBuild(result.metafile, outDir);
}

/**
 * The control of import_ratio (docs/performance.md): a function holding only the DynamoDB document client, built like
 * every function: the client made on the first invocation, as `onLambda` makes the context, so importing
 * it loads and evaluates the SDK modules and nothing else. Every handler needs at least this much.
 */
const CONTROL_SOURCE = documentClientSource('export const handler').join('\n');

/** The document client made on the first call of the function `declaration` declares: the control's body. */
function documentClientSource(declaration: string): string[] {
  return [
    "import { DynamoDBClient } from '@aws-sdk/client-dynamodb';",
    "import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';",
    'let client;',
    `${declaration} = async () => {`,
    '  client ??= DynamoDBDocumentClient.from(new DynamoDBClient({}), { unmarshallOptions: { wrapNumbers: true } });',
    '  return client;',
    '};',
  ];
}

export const CONTROL_NAME = 'document client only (control)';

/**
 * The floor of import_libraries_ratio: the control plus the libraries every function loads whatever it does (the rules: decimal.js
 * for money, zod/mini with its English messages for every input and the configuration, Powertools Logger
 * and Metrics through middy at the edge), with one small schema built at import as every function builds
 * at least its configuration's. Nothing of our own. Its ratio to the control is how much of import_ratio
 * those libraries take before any of the service's code; the slowest function over it is what the service's own
 * code adds (import_libraries_ratio; docs/performance.md, "Import time").
 */
const LIBRARIES_SOURCE = [
  "import { Logger } from '@aws-lambda-powertools/logger';",
  "import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';",
  "import { Metrics } from '@aws-lambda-powertools/metrics';",
  "import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';",
  "import middy from '@middy/core';",
  "import Decimal from 'decimal.js';",
  "import * as z from 'zod/mini';",
  "import en from 'zod/v4/locales/en.js';",
  ...documentClientSource('const documentClient'),
  'z.config(en());',
  'const input = z.object({ amount: z.string().check(z.minLength(1)) });',
  'let wrapped;',
  'export const handler = async (event, context) => {',
  '  wrapped ??= middy(async (e) => ({ amount: new Decimal(input.parse(e).amount).toFixed(2), db: await documentClient() }))',
  "    .use(injectLambdaContext(new Logger({ serviceName: 'bench' })))",
  "    .use(logMetrics(new Metrics({ namespace: 'bench', serviceName: 'bench' })));",
  '  return wrapped(event, context);',
  '};',
].join('\n');

export const LIBRARIES_NAME = 'control + the libraries every function loads (floor)';

/** Bundles a function given as source (the control, the libraries floor) into the workspace with the stack's options. */
async function bundleSource(workspace: BundleWorkspace, name: string, source: string) {
  const entry = join(workspace.dir, `${name}-entry.mjs`);
  writeFileSync(entry, `${source}\n`);
  const outDir = join(workspace.dir, name);
  mkdirSync(outDir, { recursive: true });
  const result = await build({ ...esbuildOptionsFor(entry, outDir), metafile: true });
  return describeBuild(result.metafile, outDir);
}

export interface BundleReport {
  results: BundleResult[];
  /** The document-client-only function, measured in the same round-robin as the others. */
  control: BundleResult;
  /** The control with the libraries every function loads, in the same round-robin: the floor of import_ratio. */
  libraries: BundleResult;
  /** The same handler bundled with `@aws-sdk/*` left external (the runtime's SDK), for comparison. */
  sdkExternal: { handler: string; kb: number; importMsP50: number; importCpuMsP50: number; firstRequestMsP50: number };
}

/** One round-robin's import ratio: the slowest function's import p50 over the control's. */
export interface ImportRound {
  ratio: number;
  slowest: string;
  slowestMs: number;
  controlMs: number;
  /** The libraries floor's import p50 over the control's, in the same round. */
  librariesRatio: number;
  librariesMs: number;
  /** import_libraries_ratio's round: the slowest function's import p50 over the libraries floor's. */
  overLibraries: number;
}

/** Rounds of the round-robin (one round can't decide import_ratio; the median round's figures are reported). */
export const IMPORT_ROUNDS = 3;

export function importRound(report: BundleReport): ImportRound {
  const slowest = report.results.reduce((worst, entry) => (entry.importMsP50 > worst.importMsP50 ? entry : worst));
  return {
    ratio: slowest.importMsP50 / report.control.importMsP50,
    slowest: slowest.handler,
    slowestMs: slowest.importMsP50,
    controlMs: report.control.importMsP50,
    librariesRatio: report.libraries.importMsP50 / report.control.importMsP50,
    librariesMs: report.libraries.importMsP50,
    overLibraries: slowest.importMsP50 / report.libraries.importMsP50,
  };
}

/**
 * Builds every function's bundle with the stack's options, then imports each in `IMPORT_RUNS` fresh Node
 * processes per round, `IMPORT_ROUNDS` rounds. The runs go round-robin over the bundles, so a burst of load
 * on the machine falls on all of them alike instead of on whichever function happened to be measured at the
 * time. The report is the round whose import ratio is the median of the rounds'; `rounds` holds each.
 */
export async function measureBundles(
  root: string,
  workspace: BundleWorkspace,
  comparisonHandler: string,
  onRound: (round: ImportRound, index: number) => void = () => {},
): Promise<BundleReport & { rounds: ImportRound[] }> {
  const handlers = functionEntries(root);
  const built = [];
  for (const handler of handlers) built.push({ handler, ...(await bundle(root, workspace, handler)) });
  const external = {
    handler: comparisonHandler,
    ...(await bundle(root, workspace, comparisonHandler, 'sdk-external', { external: ['@aws-sdk/*'] })),
  };
  const control = { handler: CONTROL_NAME, ...(await bundleSource(workspace, 'control', CONTROL_SOURCE)) };
  const libraries = { handler: LIBRARIES_NAME, ...(await bundleSource(workspace, 'libraries', LIBRARIES_SOURCE)) };
  const all = [...built, external, control, libraries];
  const reports: BundleReport[] = [];
  for (let index = 0; index < IMPORT_ROUNDS; index++) {
    const timings = all.map(() => [] as ReturnType<typeof importOnce>[]);
    for (let run = 0; run < IMPORT_RUNS; run++)
      all.forEach((entry, i) => timings[i]!.push(importOnce(entry.file, workspace.dir, entry.firstRequestFiles)));
    const p50s = timings.map((runs) => ({
      importMsP50: median(runs.map((r) => r.wallMs)),
      importCpuMsP50: median(runs.map((r) => r.cpuMs)),
      firstRequestMsP50: median(runs.map((r) => r.thenMs)),
    }));
    const report = {
      results: built.map((entry, i) => ({
        handler: entry.handler,
        kb: entry.kb,
        totalKb: entry.totalKb,
        ...p50s[i]!,
        heaviest: entry.heaviest,
      })),
      sdkExternal: { handler: comparisonHandler, kb: external.kb, ...p50s[built.length]! },
      control: {
        handler: CONTROL_NAME,
        kb: control.kb,
        totalKb: control.totalKb,
        ...p50s[built.length + 1]!,
        heaviest: control.heaviest,
      },
      libraries: {
        handler: LIBRARIES_NAME,
        kb: libraries.kb,
        totalKb: libraries.totalKb,
        ...p50s[built.length + 2]!,
        heaviest: libraries.heaviest,
      },
    };
    reports.push(report);
    onRound(importRound(report), index);
  }
  const byRatio = [...reports].sort((a, b) => importRound(a).ratio - importRound(b).ratio);
  return { ...byRatio[Math.floor(byRatio.length / 2)]!, rounds: reports.map(importRound) };
}
