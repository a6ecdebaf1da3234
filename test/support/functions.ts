import { asFunction } from '../../infra/local/iam/enforcement.js';

/**
 * A function module's `bind` whose handlers run as that function (`handler`, its module path), under its
 * deployed role, as the local runtime runs the handlers it invokes: for tests that call a handler directly
 * (a settlement task, a queue consumer) rather than through the server or the runner.
 */
export function runsAs<C, H extends (...args: any[]) => any>(handler: string, bind: (ctx: C) => H): (ctx: C) => H {
  return (ctx) => asFunction(handler, bind(ctx)) as H;
}
