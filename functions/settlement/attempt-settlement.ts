import type { SettlementTaskResult } from '../../infra/settlement-workflow.js';
import { attemptSettlement } from '../../lib/settlement/settle-trade.js';
import { tradeIdOf } from '../../lib/settlement/task-event.js';

/** Settlement workflow task (one session: settle if every settling party is covered). Invoked by Step Functions or the local runner. */
export const handler = async (event: unknown): Promise<SettlementTaskResult> => attemptSettlement(tradeIdOf(event));
