import { type AppContext } from '../../lib/context.js';
import { onLambda } from '../../lib/edge.js';
import type { SettlementTaskResult } from '../../lib/domain/workflow-io.js';
import { activateTrade } from '../../lib/settlement/activate-trade.js';
import { settlementTaskInput } from '../../lib/settlement/task-input.js';

/** Settlement workflow task (accepted -> active). Invoked by Step Functions, or by the local runner. */
export const bind =
  (ctx: AppContext) =>
  async (event: unknown): Promise<SettlementTaskResult> =>
    activateTrade(ctx, settlementTaskInput('activate', event).trade_id);

export const handler = onLambda(bind);
