import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const LIB = join(ROOT, 'lib');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every module specifier a file imports or re-exports (static and dynamic). */
function specifiers(source: string): string[] {
  const found: string[] = [];
  for (const match of source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"]([^'"]+)['"]/g))
    found.push(match[1]!);
  return found;
}

/**
 * Top-level declarations that hold state across calls: a `let` or `var`, or a `const` holding a Map, Set,
 * WeakMap or WeakSet not typed read-only. (Top level = unindented, as every file here is laid out.)
 */
function moduleStateDeclarations(source: string): string[] {
  return source
    .split('\n')
    .filter(
      (line) =>
        /^(export\s+)?(let|var)\s/.test(line) ||
        (/^(export\s+)?const\s+\w+\s*(:[^=]*)?=\s*new\s+(Weak)?(Map|Set)\b/.test(line) &&
          !/^(export\s+)?const\s+\w+\s*:\s*Readonly(Map|Set)</.test(line)),
    );
}

/**
 * The layers of lib/, lowest first; a module may import its own layer and the ones below, never above:
 * - domain: pure rules and shapes (lib/domain);
 * - runtime: what the code runs with: configuration, the context and its clients, observability, crypto
 *   (lib/config.ts, lib/context.ts, lib/runtime, lib/observability, lib/crypto);
 * - store: DynamoDB tables, items and access patterns (lib/store);
 * - ledger: the booking of balance changes on top of the store: the booking and its cold path's transaction, a
 *   hot account's group commit (queue shards, lease, results), deposits (lib/ledger; README.md there). The store
 *   writes nothing of its own through it: what a booking writes that a migration also writes (a movement's record
 *   and entries) lives in the store;
 * - capabilities: the use cases (lib/<capability>);
 * - http: the API: middlewares, schemas, the route table and its description (lib/http, lib/openapi, lib/routes.ts);
 * - edge: where a context is built and a handler bound to it (lib/edge.ts), wiring the layers together.
 * functions/ and infra/ sit above all of them.
 */
const LAYERS = ['domain', 'runtime', 'store', 'ledger', 'capabilities', 'http', 'edge'] as const;
type Layer = (typeof LAYERS)[number];

function layerOf(file: string): Layer {
  const path = relative(LIB, file).split('\\').join('/');
  const top = path.split('/')[0]!;
  if (top === 'domain') return 'domain';
  if (['config.ts', 'context.ts', 'runtime', 'observability', 'crypto'].includes(top)) return 'runtime';
  if (top === 'store') return 'store';
  if (top === 'ledger') return 'ledger';
  if (['http', 'openapi', 'routes.ts'].includes(top)) return 'http';
  if (top === 'edge.ts') return 'edge';
  return 'capabilities';
}

/** lib/'s import graph: each file and the lib/ files it imports (type-only imports included). */
function importGraph(): Map<string, string[]> {
  const files = sourceFiles(LIB);
  return new Map(
    files.map((file) => [
      file,
      specifiers(readFileSync(file, 'utf8'))
        .filter((specifier) => specifier.startsWith('.'))
        .map((specifier) => resolve(dirname(file), specifier).replace(/\.js$/, '.ts'))
        .filter((target) => target.startsWith(LIB)),
    ]),
  );
}

/** The graph's import circles: its strongly connected components of more than one file (Tarjan). */
function circlesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(node, Math.min(low.get(node)!, index.get(target)!));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      for (let member = stack.pop()!; ; member = stack.pop()!) {
        onStack.delete(member);
        component.push(member);
        if (member === node) break;
      }
      if (component.length > 1) circles.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return circles;
}

describe('one direction', () => {
  it('lib/ has no import circles', () => {
    expect(circlesOf(importGraph()).map((circle) => circle.map((file) => relative(ROOT, file)).join(' <-> '))).toEqual(
      [],
    );
  });

  it('no module of lib/ imports from a layer above its own (domain < runtime < store < ledger < capabilities < http < edge)', () => {
    const upward = [...importGraph()].flatMap(([file, targets]) =>
      targets
        .filter((target) => LAYERS.indexOf(layerOf(target)) > LAYERS.indexOf(layerOf(file)))
        .map(
          (target) => `${relative(ROOT, file)} (${layerOf(file)}) -> ${relative(ROOT, target)} (${layerOf(target)})`,
        ),
    );
    expect(upward).toEqual([]);
  });

  it('the circle check finds a circle and leaves a chain alone', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
      ['e', ['d']],
    ]);
    expect(circlesOf(graph)).toEqual([['a', 'b', 'c']]);
    expect(
      circlesOf(
        new Map([
          ['a', ['b']],
          ['b', []],
        ]),
      ),
    ).toEqual([]);
  });

  it('places each folder in its layer', () => {
    const at = (path: string) => layerOf(join(LIB, path));
    expect([
      at('domain/ledger.ts'),
      at('context.ts'),
      at('crypto/secret-cipher.ts'),
      at('store/ledger.ts'),
      at('ledger/engine.ts'),
      at('transfers/create-transfer.ts'),
      at('http/api-handler.ts'),
      at('routes.ts'),
      at('edge.ts'),
    ]).toEqual(['domain', 'runtime', 'runtime', 'store', 'ledger', 'capabilities', 'http', 'http', 'edge']);
  });
});

describe('layering', () => {
  it('lib/ imports nothing from infra/ (route data and workflow shapes live in lib, infra builds on them)', () => {
    const offending = sourceFiles(LIB).flatMap((file) =>
      specifiers(readFileSync(file, 'utf8'))
        .filter((specifier) => specifier.startsWith('.'))
        .filter((specifier) => !relative(ROOT, resolve(dirname(file), specifier)).startsWith('lib'))
        .map((specifier) => `${relative(ROOT, file)} -> ${specifier}`),
    );
    expect(offending).toEqual([]);
  });

  it('lib/ keeps nothing in module state: no top-level let or var, no mutable collection (clients, caches and hooks live on the context)', () => {
    const offending = sourceFiles(LIB).flatMap((file) =>
      moduleStateDeclarations(readFileSync(file, 'utf8')).map((line) => `${relative(ROOT, file)}: ${line}`),
    );
    expect(offending).toEqual([]);
  });

  it('the module-state check sees a cache, a hook and a client kept by a module, and lets constants and read-only tables be', () => {
    const source = [
      'const secretCache = new Map<string, Buffer>();',
      'let chunkObserver: ChunkObserver | undefined;',
      'export let client = new DynamoDBClient({});',
      'const seen = new WeakMap<object, number>();',
      'const BY_SYMBOL: ReadonlyMap<string, Asset> = new Map(ASSETS.map((asset) => [asset.symbol, asset]));',
      'const MAX_ID_CHARS = 100;',
      '  let inFunction = 0;',
    ].join('\n');
    expect(moduleStateDeclarations(source)).toEqual([
      'const secretCache = new Map<string, Buffer>();',
      'let chunkObserver: ChunkObserver | undefined;',
      'export let client = new DynamoDBClient({});',
      'const seen = new WeakMap<object, number>();',
    ]);
  });

  it('store functions name the part of the context they use (`Pick<AppContext, ...>`), never the whole of it', () => {
    // A migration's page and the run that drives it may use anything: a migration is code of its own time.
    const whole = /\b\w+\??: AppContext\b(?!\[)/;
    const offending = sourceFiles(join(LIB, 'store'))
      .filter((file) => !file.includes(join('store', 'migrations', 'run.ts')))
      .flatMap((file) =>
        readFileSync(file, 'utf8')
          .split('\n')
          .filter((line) => whole.test(line))
          .map((line) => `${relative(ROOT, file)}: ${line.trim()}`),
      );
    expect(offending).toEqual([]);
    expect(whole.test('export async function getTrade(ctx: AppContext, tradeId: string) {')).toBe(true);
    expect(whole.test("  ctx: Pick<AppContext, 'db' | 'tables'>,")).toBe(false);
  });

  it('the check sees an import that leaves lib/', () => {
    const file = join(LIB, 'http', 'middleware', 'example.ts');
    const [specifier] = specifiers("import { routeFor } from '../../../infra/routes.js';");
    expect(relative(ROOT, resolve(dirname(file), specifier!))).toBe(join('infra', 'routes.js'));
  });
});
