import type { Metafile } from 'esbuild';

/**
 * The outputs importing `file` loads (an esbuild metafile's output path): the file and, transitively, the
 * chunks it imports statically; what it reaches only through `import()` is left out. The benchmark sizes and
 * times this; `test/infra/bundles.test.ts` checks what it holds.
 */
export function loadedAtImport(metafile: Metafile, file: string): string[] {
  const loaded = new Set<string>();
  const visit = (output: string) => {
    if (loaded.has(output) || !metafile.outputs[output]) return;
    loaded.add(output);
    for (const imported of metafile.outputs[output]!.imports)
      if (imported.kind === 'import-statement') visit(imported.path);
  };
  visit(file);
  return [...loaded];
}
