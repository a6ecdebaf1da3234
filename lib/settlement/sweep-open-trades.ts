import { clock } from '../clock.js';
import { listOpenTrades } from '../store/trades.js';
import { ensureSettlementRunning, type SweepOutcome } from './start-settlement.js';

/** Trades younger than this are left to the request that stored them, which starts their execution itself. */
export const SWEEP_GRACE_MS = 60_000;

/**
 * The AWS counterpart of the local runner's resume-on-start: every open trade older than the grace period
 * gets a live execution. Run on a schedule by the stack.
 */
export async function sweepOpenTrades(): Promise<Record<SweepOutcome, number>> {
  const counts: Record<SweepOutcome, number> = { started: 0, running: 0, redriven: 0, finished: 0 };
  const cutoff = clock.nowMs() - SWEEP_GRACE_MS;
  for (const trade of await listOpenTrades()) {
    if (trade.accepted_timestamp > cutoff) continue;
    counts[await ensureSettlementRunning(trade)]++;
  }
  if (counts.started || counts.redriven) console.warn(JSON.stringify({ level: 'warn', message: 'settlement sweep revived trades', ...counts }));
  return counts;
}
