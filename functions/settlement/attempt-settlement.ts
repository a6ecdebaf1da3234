import { onLambda, type AppContext } from '../../lib/context.js';
import type { SettlementTaskResult } from '../../lib/settlement/workflow-io.js';
import { attemptSettlement } from '../../lib/settlement/settle-trade.js';
import { tradeIdOf } from '../../lib/settlement/task-event.js';

/** Settlement workflow task (one session: settle if every settling party is covered). Invoked by Step Functions or the local runner. */
export const bind =
  (ctx: AppContext) =>
  async (event: unknown): Promise<SettlementTaskResult> =>
    attemptSettlement(ctx, tradeIdOf(event));

export const handler = onLambda(bind);
