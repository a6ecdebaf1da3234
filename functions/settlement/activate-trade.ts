import { type AppContext } from '../../lib/context.js';
import { onLambda } from '../../lib/edge.js';
import type { SettlementTaskResult } from '../../lib/domain/workflow-io.js';
import { activateTrade } from '../../lib/settlement/settle-trade.js';
import { tradeIdOf } from '../../lib/settlement/task-event.js';

/** Settlement workflow task (accepted -> active). Invoked by Step Functions, or by the local runner. */
export const bind =
  (ctx: AppContext) =>
  async (event: unknown): Promise<SettlementTaskResult> =>
    activateTrade(ctx, tradeIdOf(event));

export const handler = onLambda(bind);
