import { onLambda, type AppContext } from '../../lib/context.js';
import { sweepOpenTrades } from '../../lib/settlement/sweep-open-trades.js';

/** Scheduled: gives every open trade a live settlement execution (design section 7). */
export const bind =
  (ctx: AppContext) =>
  async () =>
    sweepOpenTrades(ctx);

export const handler = onLambda(bind);
