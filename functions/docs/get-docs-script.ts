import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { getDocsRedocStandaloneJs } from '../../lib/routes.js';

/**
 * Redoc's standalone bundle (about 1.1 MB, inside Lambda's 6 MB response limit). A deployed function has it
 * beside its bundle (the stack's bundling copies it); a source checkout reads it from node_modules.
 */
const BUNDLED_SCRIPT = fileURLToPath(new URL('./redoc.standalone.js', import.meta.url));

let script: string | undefined;
function redocScript(): string {
  script ??= readFileSync(
    existsSync(BUNDLED_SCRIPT)
      ? BUNDLED_SCRIPT
      : createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js'),
    'utf8',
  );
  return script;
}

/** GET /docs/redoc.standalone.js: the renderer GET /docs loads. Unsigned. */
export const bind = routeHandler(
  getDocsRedocStandaloneJs,
  {
    produces: 'text/javascript',
    summary: 'The API reference renderer (Redoc)',
    headers: { 'Cache-Control': 'public, max-age=3600' },
  },
  async ({ ctx }) => redocScript(),
);

export const handler = onLambda(bind);
