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

  it('the check sees an import that leaves lib/', () => {
    const file = join(LIB, 'http', 'middleware', 'example.ts');
    const [specifier] = specifiers("import { routeFor } from '../../../infra/routes.js';");
    expect(relative(ROOT, resolve(dirname(file), specifier!))).toBe(join('infra', 'routes.js'));
  });
});
