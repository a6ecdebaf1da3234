import type { SettlementTaskResult } from '../../infra/settlement-workflow.js';
import { activateTrade } from '../../lib/settlement/settle-trade.js';
import { tradeIdOf } from '../../lib/settlement/task-event.js';

/** Settlement workflow task (accepted -> active). Invoked by Step Functions, or by the local runner. */
export const handler = async (event: unknown): Promise<SettlementTaskResult> => activateTrade(tradeIdOf(event));
