import { type AppContext } from '../../lib/context.js';
import { onLambda } from '../../lib/edge.js';
import { continueSettlement } from '../../lib/settlement/start-settlement.js';
import type { SettlementTaskResult } from '../../lib/domain/workflow-io.js';
import { settlementTaskInput } from '../../lib/settlement/task-input.js';

/** Settlement workflow task (a leg's end: start the trade's next execution). Invoked by Step Functions or the local runner. */
export const bind =
  (ctx: AppContext) =>
  async (event: unknown): Promise<SettlementTaskResult> => {
    const input = settlementTaskInput('continue', event);
    return continueSettlement(ctx, input.trade_id, input.leg);
  };

export const handler = onLambda(bind);
