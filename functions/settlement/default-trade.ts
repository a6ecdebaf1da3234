import { type AppContext } from '../../lib/context.js';
import { onLambda } from '../../lib/edge.js';
import type { SettlementTaskResult } from '../../lib/domain/workflow-io.js';
import { defaultTrade } from '../../lib/settlement/settle-trade.js';
import { tradeIdOf } from '../../lib/settlement/task-event.js';

/** Settlement workflow task (past the deadline: terminated / defaulted, balances untouched). Invoked by Step Functions, or by the local runner. */
export const bind =
  (ctx: AppContext) =>
  async (event: unknown): Promise<SettlementTaskResult> =>
    defaultTrade(ctx, tradeIdOf(event));

export const handler = onLambda(bind);
