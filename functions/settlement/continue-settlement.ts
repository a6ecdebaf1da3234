import { type AppContext } from '../../lib/context.js';
import { onLambda } from '../../lib/edge.js';
import { continueSettlement } from '../../lib/settlement/start-settlement.js';
import type { SettlementTaskResult } from '../../lib/domain/workflow-io.js';
import { legOf, tradeIdOf } from '../../lib/settlement/task-event.js';

/** Settlement workflow task (a leg's end: start the trade's next execution). Invoked by Step Functions or the local runner. */
export const bind =
  (ctx: AppContext) =>
  async (event: unknown): Promise<SettlementTaskResult> =>
    continueSettlement(ctx, tradeIdOf(event), legOf(event));

export const handler = onLambda(bind);
