import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { routeTableDocument } from '../lib/openapi/route-table-document.js';
import { routes } from './routes.js';

const USAGE = 'usage: npm run openapi -- [--out FILE]   (default: openapi.json)';

/** The API description as text: two-space JSON with a final newline, the same bytes for the same routes. */
export async function openApiText(): Promise<string> {
  return `${JSON.stringify(await routeTableDocument(routes), null, 2)}\n`;
}

async function main(): Promise<void> {
  let out: string;
  try {
    const { values } = parseArgs({ options: { out: { type: 'string' } }, strict: true, allowPositionals: false });
    out = resolve(values.out ?? 'openapi.json');
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, await openApiText());
  console.log(out);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
