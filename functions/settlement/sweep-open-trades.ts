import { type AppContext } from '../../lib/context.js';
import { onLambda } from '../../lib/edge.js';
import { sweepOpenTrades, type SweepReport } from '../../lib/settlement/sweep-open-trades.js';

/** What the sweep needs of Lambda's invocation context: how long it may still run. */
interface InvocationTime {
  getRemainingTimeInMillis(): number;
}

/** Scheduled: gives every overdue open trade a live settlement execution, within the invocation's time. */
export const bind =
  (ctx: AppContext) =>
  async (_event?: unknown, invocation?: InvocationTime): Promise<SweepReport> =>
    sweepOpenTrades(ctx, invocation ? { remainingMs: () => invocation.getRemainingTimeInMillis() } : {});

export const handler = onLambda(bind);
