import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { BindApiHandler } from '../../lib/http/api-handler.js';
import * as table from '../../lib/routes.js';
import { onlyRoute, type Route, routeFor, routes } from '../../lib/routes.js';
import { PROJECT_ROOT } from '../../infra/service-function.js';

const isRoute = (value: unknown): value is Route =>
  typeof value === 'object' && value !== null && 'method' in value && 'path' in value && 'handler' in value;

describe('the route table (lib/routes.ts)', () => {
  it('lists every exported row once, and no row twice', () => {
    const rows = Object.values(table).filter(isRoute);
    expect(rows.length).toBe(routes.length);
    expect(new Set(routes).size).toBe(routes.length);
    for (const row of rows) expect(routes, `${row.method} ${row.path}`).toContain(row);
    expect(new Set(routes.map((route) => `${route.method} ${route.path}`)).size).toBe(routes.length);
  });

  it("has each route's function built for its own row", async () => {
    for (const route of routes) {
      const module = (await import(pathToFileURL(resolve(PROJECT_ROOT, route.handler)).href)) as {
        bind: BindApiHandler;
      };
      expect(module.bind.api.route, route.handler).toBe(route);
    }
  }, 120_000);

  it("finds a function's own route for its requests only, as the table finds it", () => {
    const own = routes.find((route) => route.method === 'POST' && route.path === '/trades')!;
    const routeOf = onlyRoute(own);
    expect(routeOf('POST', '/trades')).toBe(own);
    expect(routeOf('POST', '/trades')).toBe(routeFor('POST', '/trades'));
    expect(routeOf('GET', '/trades')).toBeUndefined();
    expect(routeOf('POST', '/transfers')).toBeUndefined();
  });
});
