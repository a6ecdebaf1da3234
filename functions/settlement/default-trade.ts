import { type AppContext } from '../../lib/context.js';
import { onLambda } from '../../lib/edge.js';
import type { SettlementTaskResult } from '../../lib/domain/workflow-io.js';
import { defaultTrade } from '../../lib/settlement/settle-trade.js';
import { settlementTaskInput } from '../../lib/settlement/task-input.js';

/** Settlement workflow task (past the deadline: terminated / defaulted, balances untouched). Invoked by Step Functions, or by the local runner. */
export const bind =
  (ctx: AppContext) =>
  async (event: unknown): Promise<SettlementTaskResult> =>
    defaultTrade(ctx, settlementTaskInput('default', event).trade_id);

export const handler = onLambda(bind);
