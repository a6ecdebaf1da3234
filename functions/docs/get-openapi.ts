import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as z from 'zod/mini';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { getOpenapiJson, routes } from '../../lib/routes.js';

/**
 * A deployed function finds the document beside its bundle (the stack's bundling writes it with the same
 * generator as `npm run openapi`); a source checkout (`npm start`, tests) generates it from the route table.
 */
const BUNDLED_DOCUMENT = fileURLToPath(new URL('./openapi.json', import.meta.url));

let document: Promise<unknown> | undefined;
function apiDocument(): Promise<unknown> {
  // The generator (every schema, zod's JSON Schema conversion) is imported only where there is no prebuilt document.
  document ??= existsSync(BUNDLED_DOCUMENT)
    ? Promise.resolve(JSON.parse(readFileSync(BUNDLED_DOCUMENT, 'utf8')))
    : import('../../lib/openapi/route-table-document.js').then(({ routeTableDocument }) => routeTableDocument(routes));
  return document;
}

/** GET /openapi.json: this API's OpenAPI 3.1 description. Unsigned; any query is ignored. */
export const bind = routeHandler(
  getOpenapiJson,
  {
    response: async () =>
      z.looseObject({ openapi: z.literal('3.1.0'), info: z.looseObject({}), paths: z.looseObject({}) }),
    summary: 'This API description (OpenAPI 3.1)',
    description: 'Generated from the schemas the handlers validate with and the route table.',
  },
  async ({ ctx }) => apiDocument(),
);

export const handler = onLambda(bind);
