import type { SettlementTaskResult } from '../domain/workflow-io.js';
import { type Trade } from '../domain/trade.js';
import { getTrade } from '../store/trades.js';
import type { AppContext } from '../context.js';

// What every settlement task starts from: the trade as read now, and its answer once the trade is closed.

/** Time moves on the service clock, which tests can move; `now` is read once per task for one decision. */
export function now(ctx: AppContext): number {
  return ctx.clock.nowMs();
}

export async function readTrade(ctx: AppContext, tradeId: string): Promise<Trade> {
  const trade = await getTrade(ctx, tradeId, { consistent: true });
  // A task for a trade that doesn't exist is a broken execution, not a business outcome: fail it loudly.
  if (!trade) throw new Error(`settlement task for unknown trade ${tradeId}`);
  return trade;
}

export function closed(trade: Trade): SettlementTaskResult {
  return { outcome: 'terminated', trade_state: trade.trade_state, settlement_state: trade.settlement_state };
}

/**
 * The attempt task's answer, told whether the leg is over: an outstanding trade whose next session would
 * start after the leg's end waits for it and continues in the next leg, so no execution outlives its bound.
 * Here rather than with the starting of executions (start-settlement.ts): the attempt task starts none, so
 * it does not load the Step Functions client.
 */
export function withLegEnd(
  ctx: AppContext,
  result: SettlementTaskResult,
  legEndsAt: string | undefined,
): SettlementTaskResult {
  if (result.outcome !== 'outstanding' || result.past_deadline || legEndsAt === undefined) return result;
  const nextSessionMs = ctx.clock.nowMs() + ctx.config.SETTLEMENT_SESSION_SECONDS * 1000;
  return nextSessionMs >= Date.parse(legEndsAt) ? { ...result, leg_over: true } : result;
}
