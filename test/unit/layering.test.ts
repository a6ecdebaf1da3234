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
  for (const match of source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"]([^'"]+)['"]/g)) found.push(match[1]!);
  return found;
}

/**
 * Top-level declarations that hold state across calls: a `let` or `var`, or a `const` holding a Map, Set,
 * WeakMap or WeakSet not typed read-only. (Top level = unindented, as every file here is laid out.)
 */
function moduleStateDeclarations(source: string): string[] {
  return source
    .split('\n')
    .filter((line) => /^(export\s+)?(let|var)\s/.test(line) || (/^(export\s+)?const\s+\w+\s*(:[^=]*)?=\s*new\s+(Weak)?(Map|Set)\b/.test(line) && !/^(export\s+)?const\s+\w+\s*:\s*Readonly(Map|Set)</.test(line)));
}

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

  it('the check sees an import that leaves lib/', () => {
    const file = join(LIB, 'http', 'middleware', 'example.ts');
    const [specifier] = specifiers("import { routeFor } from '../../../infra/routes.js';");
    expect(relative(ROOT, resolve(dirname(file), specifier!))).toBe(join('infra', 'routes.js'));
  });
});
