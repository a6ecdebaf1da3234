import type { SettlementTaskResult } from '../../infra/settlement-workflow.js';
import { defaultTrade } from '../../lib/settlement/settle-trade.js';
import { tradeIdOf } from '../../lib/settlement/task-event.js';

/** Settlement workflow task (past the deadline: terminated / defaulted, balances untouched). Invoked by Step Functions, or by the local runner. */
export const handler = async (event: unknown): Promise<SettlementTaskResult> => defaultTrade(tradeIdOf(event));
