import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { HandlerDescription } from '../http/api-handler.js';
import { openApiDocument, type DescribedRoute, type LoadedDescription, type RouteRow } from './document.js';
import { webhookDescriptions } from './webhooks.js';

/** The repository root, which route handler paths are relative to (a source checkout, not a Lambda bundle). */
const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Imports each route's handler module and reads what it recorded about its schemas. Routes are found in
 * the table, never listed here, so a route added to the table with its schemas is described with no
 * further step. Importing a handler module has no side effects (the Lambda edge builds its context on
 * the first invocation).
 */
export async function describeRoutes(
  routes: readonly (RouteRow & { handler: string })[],
  root = REPO_ROOT,
): Promise<DescribedRoute[]> {
  return Promise.all(
    routes.map(async (route) => {
      // A route module exports `bind` (its handler for a context), which carries the description.
      const module = (await import(pathToFileURL(resolve(root, route.handler)).href)) as {
        bind?: { api?: HandlerDescription };
      };
      return {
        route: {
          method: route.method,
          path: route.path,
          area: route.area,
          ...(route.writes && { writes: route.writes }),
        },
        api: module.bind?.api && (await loadDescription(module.bind.api)),
      };
    }),
  );
}

/** Imports the schemas a description names for the API description alone (`DescriptionSchema`). */
async function loadDescription(api: HandlerDescription): Promise<LoadedDescription> {
  const [response, documentedBody] = await Promise.all([api.response?.(), api.documentedBody?.()]);
  return { ...api, response, documentedBody };
}

/** The service's OpenAPI document, generated from a route table in a source checkout. */
export async function routeTableDocument(
  routes: readonly (RouteRow & { handler: string })[],
  root = REPO_ROOT,
): Promise<Record<string, unknown>> {
  const { version } = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as { version: string };
  return openApiDocument(await describeRoutes(routes, root), { version, ...webhookDescriptions() });
}
