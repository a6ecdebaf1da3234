import { settlementDeadlineMs } from '../domain/settlement.js';
import { recordTradesPastDeadline } from '../observability/metrics.js';
import { listOpenTrades } from '../store/trades.js';
import { ensureSettlementRunning, type SweepOutcome } from './start-settlement.js';
import type { AppContext } from '../context.js';

/** Trades younger than this are left to the request that stored them, which starts their execution itself. */
export const SWEEP_GRACE_MS = 60_000;

/**
 * The AWS counterpart of the local runner's resume-on-start: every open trade older than the grace period
 * gets a live execution. Run on a schedule by the stack. A trade Step Functions refuses (an execution that
 * can't be redriven, a throttled call) is logged and counted, and the sweep goes on: trades are visited
 * oldest first, so one stuck trade must not keep every younger one from being revived.
 */
export async function sweepOpenTrades(ctx: AppContext): Promise<Record<SweepOutcome | 'failed', number>> {
  const counts: Record<SweepOutcome | 'failed', number> = { started: 0, running: 0, redriven: 0, finished: 0, failed: 0 };
  const nowMs = ctx.clock.nowMs();
  const cutoff = nowMs - SWEEP_GRACE_MS;
  // A trade defaults at its first attempt at or after its deadline, so within a session of it; one still
  // open a session (and the grace) later is stuck, and ops must hear of it (alarm TradesPastDeadline).
  const overdueMargin = ctx.config.SETTLEMENT_SESSION_SECONDS * 1000 + SWEEP_GRACE_MS;
  const pastDeadline: string[] = [];
  for (const trade of await listOpenTrades(ctx)) {
    if (nowMs > settlementDeadlineMs(trade, ctx.config.SPOT_SETTLEMENT_DEADLINE_SECONDS * 1000) + overdueMargin) pastDeadline.push(trade.trade_id);
    if (trade.accepted_timestamp > cutoff) continue;
    try {
      counts[await ensureSettlementRunning(ctx, trade)]++;
    } catch (error) {
      counts.failed++;
      ctx.logger.error('settlement sweep could not revive a trade', { trade_id: trade.trade_id, error: (error as Error).message });
    }
  }
  recordTradesPastDeadline(ctx.metrics, pastDeadline.length);
  if (pastDeadline.length > 0) ctx.logger.error('trades past their deadline', { count: pastDeadline.length, trade_ids: pastDeadline.slice(0, 50) });
  if (counts.started || counts.redriven || counts.failed) {
    ctx.logger.warn('settlement sweep revived trades', { ...counts });
  }
  return counts;
}
