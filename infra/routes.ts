import type { Route } from '../lib/routes.js';

export { routeFor, routes, type Route } from '../lib/routes.js';

/** A stable CDK id / function name fragment for a route, e.g. `GetTransfersId`. */
export function routeId(route: Route): string {
  const words = [route.method.toLowerCase(), ...route.path.split(/[/_{}.-]+/).filter(Boolean)];
  return words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join('');
}
