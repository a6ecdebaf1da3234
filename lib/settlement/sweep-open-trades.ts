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
  const cutoff = ctx.clock.nowMs() - SWEEP_GRACE_MS;
  for (const trade of await listOpenTrades(ctx)) {
    if (trade.accepted_timestamp > cutoff) continue;
    try {
      counts[await ensureSettlementRunning(ctx, trade)]++;
    } catch (error) {
      counts.failed++;
      ctx.logger.error('settlement sweep could not revive a trade', { trade_id: trade.trade_id, error: (error as Error).message });
    }
  }
  if (counts.started || counts.redriven || counts.failed) {
    ctx.logger.warn('settlement sweep revived trades', { ...counts });
  }
  return counts;
}
