import { expectStatus, type BenchPlatform } from './client.js';
import { fundedTradePair, tradeBody } from './fixtures.js';
import { startLocalWorkflows } from '../../infra/local/workflow-runner.js';
import { stateTransitionCount } from '../../lib/store/settlement-history.js';
import { inParallel, median } from './stats.js';
import { benchCtx } from './stack.js';

export interface SettlementResult {
  /** Seconds from the first POST /trades to the last trade settled; null unless every trade settled. */
  settleSeconds: number | null;
  transitionsPerTrade: number;
  /** What the run saw beyond the figures (executions that did not succeed, trades left unsettled). */
  notes: string[];
  reportSeconds: number;
  settled: number;
  trades: number;
}

/**
 * `trades` funded spot trades reported through POST /trades by `reporters` concurrent callers, settled by
 * the local workflow runner (the Step Functions definition run in-process). Trades are spread over
 * `pairs` buyer/seller pairs, as a platform's trades are spread over its customers; each pair holds enough
 * for all of its trades, so every trade can settle at its first attempt. The clock runs from the first
 * report until the last trade's `settled_timestamp`.
 *
 * Transitions per trade are the states each settled trade's execution entered (the runner records the
 * engine's StateEntered events; Step Functions bills each as a state transition).
 */
export async function measureSettlement(
  platform: BenchPlatform,
  options: { trades: number; pairs: number; reporters: number; timeoutMs: number },
): Promise<SettlementResult> {
  const notes: string[] = [];
  const perPair = Math.ceil(options.trades / options.pairs);
  const pairs = await inParallel(Array.from({ length: options.pairs }), 4, () => fundedTradePair(platform, perPair));

  const ctx = benchCtx();
  const workflow = ctx.workflow;
  const { runner, stop: stopWorkflows, ctx: withRunner } = await startLocalWorkflows(ctx, { resume: false });
  ctx.workflow = withRunner.workflow;
  try {
    // Round-robin over the pairs, so trades reported together touch different accounts.
    const bodies = Array.from({ length: options.trades }, (_, i) => {
      const { buyer, seller } = pairs[i % pairs.length]!;
      return tradeBody(platform.platformCode, buyer, seller);
    });
    const startedMs = Date.now();
    const tradeIds = await inParallel(bodies, options.reporters, async (body) => {
      const response = await platform.client.post('/trades', body);
      expectStatus(response, 200, 'POST /trades');
      return response.body.message.trade_id as string;
    });
    const reportSeconds = (Date.now() - startedMs) / 1000;

    const ends = await Promise.race([
      Promise.all(tradeIds.map((id) => runner.finished(id) ?? Promise.resolve('NOT STARTED'))),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), options.timeoutMs).unref()),
    ]);
    if (!ends) notes.push(`not all executions ended within ${options.timeoutMs / 1000} s`);
    const outcomes = new Map<string, number>();
    for (const end of ends ?? []) outcomes.set(end, (outcomes.get(end) ?? 0) + 1);
    if (ends && outcomes.get('SUCCEEDED') !== tradeIds.length)
      notes.push(`executions ended: ${[...outcomes].map(([end, n]) => `${end} ${n}`).join(', ')}`);

    // The trades as the API shows them: settled ones carry the time they settled.
    const trades = await inParallel(tradeIds, 8, async (id) => {
      let response = await platform.client.get(`/trades/${id}`);
      // Reported at full speed, the 500 trades can take the key's second past its burst: a client waits as told.
      for (let attempt = 0; response.status === 429 && attempt < 5; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, (response.retryAfterSeconds ?? 1) * 1000));
        response = await platform.client.get(`/trades/${id}`);
      }
      expectStatus(response, 200, `GET /trades/${id}`);
      return response.body.message as {
        trade_state: string;
        settlement_state: string | null;
        settled_timestamp: number | null;
      };
    });
    const settled = trades.filter(
      (trade) => trade.settlement_state === 'settled' && typeof trade.settled_timestamp === 'number',
    );
    if (settled.length < trades.length)
      notes.push(`${trades.length - settled.length} of ${trades.length} trades not settled`);
    const lastSettledMs = Math.max(...settled.map((trade) => trade.settled_timestamp!));
    const settleSeconds = settled.length === trades.length ? (lastSettledMs - startedMs) / 1000 : null;

    const counts = await inParallel(tradeIds, 8, (id) => stateTransitionCount(benchCtx(), id));
    const transitionsPerTrade = counts.reduce((sum, count) => sum + count, 0) / counts.length;
    const most = Math.max(...counts);
    if (most !== median(counts)) notes.push(`transitions per trade: median ${median(counts)}, most ${most}`);
    return { settleSeconds, transitionsPerTrade, notes, reportSeconds, settled: settled.length, trades: trades.length };
  } finally {
    ctx.workflow = workflow;
    await stopWorkflows();
  }
}
