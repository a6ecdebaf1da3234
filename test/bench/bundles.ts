import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { esbuildOptionsFor } from '../../infra/bundling.js';
import { routes } from '../../infra/routes.js';
import { median } from './stats.js';

export const IMPORT_RUNS = 15;

export interface BundleResult {
  handler: string;
  kb: number;
  importMsP50: number;
  importCpuMsP50: number;
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

function heaviestPackages(metafile: Metafile): string {
  const byPackage = new Map<string, number>();
  for (const output of Object.values(metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
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

/**
 * Milliseconds a fresh `node` spends in `import()` of `file`, as a Lambda's init phase would: the clock
 * starts after Node itself is up, so only loading and evaluating the bundle (and what it imports) counts.
 * Also the CPU time the process used meanwhile (all its threads), which other load on the machine inflates
 * far less than the wall time.
 */
function importOnce(file: string, cwd: string): { wallMs: number; cpuMs: number } {
  const script = [
    'const cpu = process.cpuUsage(); const t = performance.now();',
    `await import(${JSON.stringify(pathToFileURL(file).href)});`,
    'const wall = performance.now() - t; const used = process.cpuUsage(cpu);',
    'process.stdout.write(`${wall} ${(used.user + used.system) / 1000}`);',
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
  const [wallMs, cpuMs] = run.stdout.split(' ').map(Number);
  if (run.status !== 0 || !Number.isFinite(wallMs) || !Number.isFinite(cpuMs)) throw new Error(`importing ${file} failed:\n${run.stderr}`);
  return { wallMs: wallMs!, cpuMs: cpuMs! };
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

/** Bundles `handler` with the stack's options (or `overrides`) into the workspace; returns file and size. */
export async function bundle(root: string, workspace: BundleWorkspace, handler: string, tag = 'stack', overrides: { external?: string[] } = {}) {
  const outDir = join(workspace.dir, tag, handler.replace(/\.ts$/, '').replace(/[/\\]/g, '_'));
  mkdirSync(outDir, { recursive: true });
  const outfile = join(outDir, 'index.mjs');
  const result = await build({ ...esbuildOptionsFor(resolve(root, handler), outfile), ...overrides, metafile: true, logLevel: 'warning' });
  return { file: outfile, kb: statSync(outfile).size / 1024, heaviest: heaviestPackages(result.metafile) };
}

/**
 * The control of issue 13's import_ratio: a function holding only the DynamoDB document client, built like
 * every function: the client made on the first invocation, as `onLambda` makes the context, so importing
 * it loads and evaluates the SDK modules and nothing else. Every handler needs at least this much.
 */
const CONTROL_SOURCE = [
  "import { DynamoDBClient } from '@aws-sdk/client-dynamodb';",
  "import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';",
  'let client;',
  'export const handler = async () => {',
  '  client ??= DynamoDBDocumentClient.from(new DynamoDBClient({}), { unmarshallOptions: { wrapNumbers: true } });',
  '  return client;',
  '};',
].join('\n');

export const CONTROL_NAME = 'document client only (control)';

/** Bundles the control function into the workspace with the stack's options. */
async function bundleControl(workspace: BundleWorkspace) {
  const entry = join(workspace.dir, 'control-entry.mjs');
  writeFileSync(entry, `${CONTROL_SOURCE}\n`);
  const outfile = join(workspace.dir, 'control', 'index.mjs');
  mkdirSync(join(workspace.dir, 'control'), { recursive: true });
  const result = await build({ ...esbuildOptionsFor(entry, outfile), metafile: true, logLevel: 'warning' });
  return { file: outfile, kb: statSync(outfile).size / 1024, heaviest: heaviestPackages(result.metafile) };
}

export interface BundleReport {
  results: BundleResult[];
  /** The document-client-only function, measured in the same round-robin as the others. */
  control: BundleResult;
  /** The same handler bundled with `@aws-sdk/*` left external (the runtime's SDK), for comparison. */
  sdkExternal: { handler: string; kb: number; importMsP50: number; importCpuMsP50: number };
}

/**
 * Builds every function's bundle with the stack's options, then imports each in `IMPORT_RUNS` fresh Node
 * processes. The runs go round-robin over the bundles, so a burst of load on the machine falls on all of
 * them alike instead of on whichever function happened to be measured at the time.
 */
export async function measureBundles(root: string, workspace: BundleWorkspace, comparisonHandler: string): Promise<BundleReport> {
  const handlers = functionEntries(root);
  const built = [];
  for (const handler of handlers) built.push({ handler, ...(await bundle(root, workspace, handler)) });
  const external = { handler: comparisonHandler, ...(await bundle(root, workspace, comparisonHandler, 'sdk-external', { external: ['@aws-sdk/*'] })) };
  const control = { handler: CONTROL_NAME, ...(await bundleControl(workspace)) };
  const all = [...built, external, control];
  const timings = all.map(() => [] as { wallMs: number; cpuMs: number }[]);
  for (let run = 0; run < IMPORT_RUNS; run++) all.forEach((entry, i) => timings[i]!.push(importOnce(entry.file, workspace.dir)));
  const p50s = timings.map((runs) => ({ importMsP50: median(runs.map((r) => r.wallMs)), importCpuMsP50: median(runs.map((r) => r.cpuMs)) }));
  return {
    results: built.map((entry, i) => ({ handler: entry.handler, kb: entry.kb, ...p50s[i]!, heaviest: entry.heaviest })),
    sdkExternal: { handler: comparisonHandler, kb: external.kb, ...p50s[built.length]! },
    control: { handler: CONTROL_NAME, kb: control.kb, ...p50s[built.length + 1]!, heaviest: control.heaviest },
  };
}
