import { type AppContext } from '../../lib/context.js';
import { onLambda } from '../../lib/edge.js';
import { checkLedgerOnSchedule } from '../../lib/reconciliation/scheduled-check.js';

/** What the check needs of Lambda's invocation context: how long it may still run. */
interface InvocationTime {
  getRemainingTimeInMillis(): number;
}

/** Scheduled (hourly): the ledger check over the whole main table, its outcome as metrics. */
export const bind = (ctx: AppContext) => async (_event?: unknown, invocation?: InvocationTime) =>
  checkLedgerOnSchedule(ctx, invocation ? { remainingMs: () => invocation.getRemainingTimeInMillis() } : {});

export const handler = onLambda(bind);
