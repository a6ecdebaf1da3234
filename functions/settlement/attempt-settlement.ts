import { type AppContext } from '../../lib/context.js';
import { onLambda } from '../../lib/edge.js';
import type { SettlementTaskResult } from '../../lib/domain/workflow-io.js';
import { attemptSettlement } from '../../lib/settlement/settle-trade.js';
import { settlementTaskInput } from '../../lib/settlement/task-input.js';
import { withLegEnd } from '../../lib/settlement/trade-task.js';

/** Settlement workflow task (one session: settle if every settling party is covered). Invoked by Step Functions or the local runner. */
export const bind =
  (ctx: AppContext) =>
  async (event: unknown): Promise<SettlementTaskResult> => {
    const input = settlementTaskInput('attempt', event);
    return withLegEnd(ctx, await attemptSettlement(ctx, input.trade_id), input.leg_ends_at);
  };

export const handler = onLambda(bind);
