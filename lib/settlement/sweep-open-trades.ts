import { settlementDeadlineMs } from '../domain/settlement.js';
import { recordTradesPastDeadline } from '../observability/metrics.js';
import { dueTradesPage, OPEN_SHARDS, postponeDue, type DueTrade } from '../store/trades.js';
import { ensureSettlementRunning, type SweepOutcome } from './start-settlement.js';
import type { AppContext } from '../context.js';

/**
 * The settlement sweep (nothing may strand a trade). It never looks at a healthy trade:
 * every settlement step moves its trade's due time (the sparse open-trades index, `gsi2`) a session ahead in
 * the step's own conditioned update, and a fresh trade is due at its first attempt. So a trade still open
 * past its due time is one whose execution never started, failed, or is stuck; the sweep reads only those,
 * in pages, most overdue first, and makes sure each has a live execution (Step Functions on AWS, the local
 * runner locally).
 *
 * Bounded per invocation: at most `SETTLEMENT_SWEEP_MAX_TRADES` trades, and none started once less than
 * `STOP_BEFORE_TIMEOUT_MS` of the invocation remains. Continuation is the next invocation: each visited trade's
 * due time moves `RECHECK_MS` ahead (conditioned on the key read, so a settlement step's own due time wins),
 * which takes it out of the next run's range; the trades this run didn't reach are still the most overdue.
 * What a run costs therefore depends on how many trades are overdue, not on how many are open: at 100,000
 * healthy open trades it reads eight empty index pages.
 *
 * Trades past their deadline by more than a session should have defaulted (alarm TradesPastDeadline). Such a
 * trade's execution is missing or failed, so it is overdue too: the sweep counts the ones it visits (a gauge,
 * 0 included, every run) and looks at them again within `PAST_DEADLINE_RECHECK_MS`, so every run counts them
 * while they stay open.
 */

/** When a visited trade is looked at again if nothing else moves it (its execution should by then). */
const RECHECK_MS = 10 * 60_000;

/** Shorter than the schedule's 5 minutes: a trade stuck past its deadline is counted by every run. */
const PAST_DEADLINE_RECHECK_MS = 60_000;

/** Trades visited at once: each costs one DescribeExecution (plus a start or redrive) and one small update. */
const SWEEP_CONCURRENCY = 8;

/** No new trade is taken once the invocation has less than this left: a visit's worst case is 3 calls of ~9 s. */
export const STOP_BEFORE_TIMEOUT_MS = 60_000;

/** Items read per shard and round: pages stay small, so a bounded run reads little past its bound. */
const PAGE_SIZE_PER_SHARD = 25;

export interface SweepReport extends Record<SweepOutcome | 'failed', number> {
  visited: number;
  /** Visited trades past their deadline by more than a session (they should have defaulted). */
  past_deadline: number;
  /** True when overdue trades were left for the next invocation (the bound or the time ran out). */
  more: boolean;
}

interface SweepOptions {
  /** The invocation's remaining time (Lambda's `getRemainingTimeInMillis`); unbounded when absent. */
  remainingMs?: () => number;
}

export async function sweepOpenTrades(ctx: AppContext, options: SweepOptions = {}): Promise<SweepReport> {
  const report: SweepReport = {
    started: 0,
    running: 0,
    redriven: 0,
    finished: 0,
    failed: 0,
    visited: 0,
    past_deadline: 0,
    more: false,
  };
  const pastDeadline: string[] = [];
  const maxTrades = ctx.config.SETTLEMENT_SWEEP_MAX_TRADES;
  const nowMs = ctx.clock.nowMs();
  const shards = Array.from({ length: OPEN_SHARDS }, (_, shard) => ({
    shard,
    startKey: undefined as Record<string, unknown> | undefined,
    done: false,
  }));
  const outOfTime = () => options.remainingMs !== undefined && options.remainingMs() < STOP_BEFORE_TIMEOUT_MS;

  while (report.visited < maxTrades && !outOfTime()) {
    const open = shards.filter((shard) => !shard.done);
    if (open.length === 0) break;
    const pages = await Promise.all(
      open.map(async (shard) => {
        const page = await dueTradesPage(ctx, shard.shard, nowMs, PAGE_SIZE_PER_SHARD, shard.startKey);
        shard.startKey = page.nextKey;
        shard.done = page.nextKey === undefined;
        return page.trades;
      }),
    );
    // Most overdue first across the shards; the index is eventually consistent, so a trade terminated a moment
    // ago may still show up: it needs nothing.
    const due = pages
      .flat()
      .filter((entry) => entry.trade.trade_state !== 'terminated')
      .sort((a, b) => a.dueKey.localeCompare(b.dueKey));
    const taken = due.slice(0, maxTrades - report.visited);
    if (taken.length < due.length) report.more = true;
    const visitedBefore = report.visited;
    await inParallel(taken, SWEEP_CONCURRENCY, outOfTime, async (entry) => {
      report.visited++;
      const stuck = isPastDeadline(ctx, entry, nowMs);
      if (stuck) pastDeadline.push(entry.trade.trade_id);
      report[await revive(ctx, entry, nowMs + (stuck ? PAST_DEADLINE_RECHECK_MS : RECHECK_MS))]++;
    });
    if (report.visited - visitedBefore < taken.length) report.more = true;
  }
  if (shards.some((shard) => !shard.done)) report.more = true;
  report.past_deadline = pastDeadline.length;
  recordTradesPastDeadline(ctx.metrics, pastDeadline.length);
  if (pastDeadline.length > 0)
    ctx.logger.error('trades past their deadline', {
      count: pastDeadline.length,
      trade_ids: pastDeadline.slice(0, 50),
    });
  if (report.started || report.redriven || report.failed || report.more) {
    ctx.logger.warn('settlement sweep revived trades', { ...report });
  }
  return report;
}

/**
 * One overdue trade: a live execution, then its due time moved on. A trade Step Functions refuses (an
 * execution that can't be redriven, a throttled call) is logged and counted, and postponed like the others:
 * trades are visited most overdue first, so one stuck trade must not keep every later one from being revived.
 */
/** A trade defaults at its first attempt at or after its deadline, so within a session of it (and a minute). */
function isPastDeadline(ctx: AppContext, entry: DueTrade, nowMs: number): boolean {
  const margin = ctx.config.SETTLEMENT_SESSION_SECONDS * 1000 + 60_000;
  return nowMs > settlementDeadlineMs(entry.trade, ctx.config.SPOT_SETTLEMENT_DEADLINE_SECONDS * 1000) + margin;
}

async function revive(ctx: AppContext, entry: DueTrade, recheckAtMs: number): Promise<SweepOutcome | 'failed'> {
  let outcome: SweepOutcome | 'failed';
  try {
    outcome = await ensureSettlementRunning(ctx, entry.trade);
  } catch (error) {
    outcome = 'failed';
    ctx.logger.error('settlement sweep could not revive a trade', {
      trade_id: entry.trade.trade_id,
      error: (error as Error).message,
    });
  }
  await postponeDue(ctx, entry, recheckAtMs);
  return outcome;
}

/** Runs `work` over `items`, `concurrency` at a time, taking no new item once `stop()` says so. */
async function inParallel<T>(
  items: readonly T[],
  concurrency: number,
  stop: () => boolean,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length && !stop()) await work(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}
