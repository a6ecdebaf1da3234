import { onLambda, type AppContext } from '../../lib/context.js';
import type { SettlementTaskResult } from '../../lib/settlement/workflow-io.js';
import { activateTrade } from '../../lib/settlement/settle-trade.js';
import { tradeIdOf } from '../../lib/settlement/task-event.js';

/** Settlement workflow task (accepted -> active). Invoked by Step Functions, or by the local runner. */
export const bind =
  (ctx: AppContext) =>
  async (event: unknown): Promise<SettlementTaskResult> =>
    activateTrade(ctx, tradeIdOf(event));

export const handler = onLambda(bind);
