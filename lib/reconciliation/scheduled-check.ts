import type { AppContext } from '../context.js';
import { recordLedgerCheck } from '../observability/metrics.js';
import { runLedgerCheck, type LedgerCheckReport } from './run-ledger-check.js';

/** Segments of the scheduled scan: parallel pages in one invocation (each up to 1 MB in memory at once). */
const SCHEDULED_SEGMENTS = 8;
/** The scan stops this long before the invocation's end, to recheck, report and emit its metrics. */
const STOP_BEFORE_TIMEOUT_MS = 60_000;

/**
 * The hourly check: the whole table, unscoped; `LedgerDiscrepancies` (alarmed) and `LedgerCheckIncomplete`
 * as metrics, each discrepancy logged as an error with its ids. A table too big to scan within one
 * invocation reports itself incomplete rather than checking part of it as if it were all.
 */
export async function checkLedgerOnSchedule(
  ctx: AppContext,
  time: { remainingMs?: () => number } = {},
): Promise<LedgerCheckReport['summary'] & { complete: boolean }> {
  const stop = new AbortController();
  const timer =
    time.remainingMs && setInterval(() => time.remainingMs!() < STOP_BEFORE_TIMEOUT_MS && stop.abort(), 1000);
  try {
    const report = await runLedgerCheck(ctx, { scope: {}, totalSegments: SCHEDULED_SEGMENTS, signal: stop.signal });
    for (const discrepancy of report.discrepancies) ctx.logger.error('ledger discrepancy', { discrepancy });
    for (const unsettled of report.unsettled) ctx.logger.warn('ledger check not conclusive', { unsettled });
    if (!report.complete)
      ctx.logger.error('ledger check stopped before the end of its scan', { summary: report.summary });
    else ctx.logger.info('ledger check', { summary: report.summary });
    recordLedgerCheck(
      ctx.metrics,
      { complete: report.complete, discrepancies: report.summary.discrepancies },
      { table: report.table },
    );
    return { ...report.summary, complete: report.complete };
  } finally {
    if (timer) clearInterval(timer);
  }
}
