import { type AppContext } from '../../lib/context.js';
import { onLambda } from '../../lib/edge.js';
import type { SettlementTaskResult } from '../../lib/domain/workflow-io.js';
import { attemptSettlement } from '../../lib/settlement/settle-trade.js';
import { withLegEnd } from '../../lib/settlement/start-settlement.js';
import { legEndsAtOf, tradeIdOf } from '../../lib/settlement/task-event.js';

/** Settlement workflow task (one session: settle if every settling party is covered). Invoked by Step Functions or the local runner. */
export const bind =
  (ctx: AppContext) =>
  async (event: unknown): Promise<SettlementTaskResult> =>
    withLegEnd(ctx, await attemptSettlement(ctx, tradeIdOf(event)), legEndsAtOf(event));

export const handler = onLambda(bind);
