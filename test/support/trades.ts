import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll } from 'vitest';
import {
  startLocalWorkflows,
  type LocalRunnerOptions,
  type LocalSettlementRunner,
} from '../../infra/local/workflow-runner.js';
import type { AppContext } from '../../lib/context.js';
import { validateTradeReport } from '../../lib/domain/trade-report.js';
import { newId } from '../../lib/store/codes.js';
import { type StoredTrade, tradeEntity, tradeOfEntry, tradeVisibilityEntity } from '../../lib/store/entities/trade.js';
import { tradeItems } from '../../lib/store/trades.js';
import { acceptedTrade, type Trade } from '../../lib/domain/trade.js';
import { transactWrite } from '../../lib/store/table/transactions.js';
import { ctx } from './context.js';
import type { TestPlatform } from './service.js';

let runner: LocalSettlementRunner | undefined;

/** The runner `startTestWorkflows` started for this file (tests wait on its executions). */
export function localRunner(): LocalSettlementRunner | undefined {
  return runner;
}

type TestWorkflowSettings = { sessionSeconds?: number; spotDeadlineSeconds?: number } & LocalRunnerOptions;

/**
 * The local settlement runner of this test file's process, with short sessions: started before the file's
 * tests, without resuming open trades (other files share the DynamoDB and their trades are theirs), and stopped
 * after them. Meanwhile it is the settlement workflow of the file's context (`ctx`, which the file's server is
 * bound to), and the session and deadline settings are that context's configuration; the stop puts both back.
 *
 * Call it at the top level of the file, before any `beforeAll` that sends requests: it registers its own hooks,
 * and a hook registered inside another hook never runs. The files of a worker share its modules and `ctx`
 * (vitest.config.ts), so a runner left running would go on settling its file's trades, every second, beside
 * every later file of the worker (it slowed them several times over, and it logged their failures).
 */
export function useTestWorkflows(settings: TestWorkflowSettings = {}): void {
  let stop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    stop = await startTestWorkflows(settings);
  });
  afterAll(async () => {
    await stop?.();
  });
}

async function startTestWorkflows(settings: TestWorkflowSettings): Promise<() => Promise<void>> {
  const before = { config: ctx.config, workflow: ctx.workflow };
  ctx.config = {
    ...ctx.config,
    SETTLEMENT_SESSION_SECONDS: settings.sessionSeconds ?? 1,
    ...(settings.spotDeadlineSeconds !== undefined && {
      SPOT_SETTLEMENT_DEADLINE_SECONDS: settings.spotDeadlineSeconds,
    }),
  };
  // No periodic sweep: other files' runners share this database, and their trades are theirs.
  const workflows = await startLocalWorkflows(ctx, { resume: false, tasks: settings.tasks, sweepIntervalMs: 0 });
  ctx.workflow = workflows.ctx.workflow;
  runner = workflows.runner;
  return async () => {
    await workflows.stop();
    ctx.config = before.config;
    ctx.workflow = before.workflow;
    runner = undefined;
  };
}

export interface TradeBodyOptions {
  buyer: string;
  seller: string;
  /** Method A by default: 0.5 BTC at 50000 USD. */
  price?: string;
  quantity?: string;
  symbol?: string;
  overrides?: Record<string, unknown>;
}

/** A valid spot trade report of `platform`: buyer receives the base, seller the quote. */
export function tradeBody(platform: TestPlatform, options: TradeBodyOptions): Record<string, any> {
  const [base, quote] = (options.symbol ?? 'BTC/USD').split('/') as [string, string];
  return {
    client_trade_id: `ct-${randomUUID()}`,
    session_id: '',
    trade_reporter: 'ops@platform.example',
    platform_code: platform.platformCode,
    symbol: `${base}/${quote}`,
    product_type: 'spot',
    trade_type: 'regular',
    trade_price: options.price ?? '50000',
    trade_quantity: options.quantity ?? '0.5',
    physical_delivery: true,
    transaction_timestamp: ctx.clock.nowMs() - 1_000,
    parties_anonymous: false,
    parties: [
      { side: 'buy', participant_code: options.buyer, asset: base, settling: true },
      { side: 'sell', participant_code: options.seller, asset: quote, settling: true },
    ],
    ...options.overrides,
  };
}

/** Polls GET /trades/{id} until `done` holds for the trade (or fails with the last state seen). */
export async function waitForTrade(
  platform: TestPlatform,
  tradeId: string,
  done: (trade: any) => boolean,
  timeoutMs = 15_000,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: any;
  while (Date.now() < deadline) {
    const response = await platform.get(`/trades/${tradeId}`);
    if (response.status !== 200) throw new Error(`GET /trades/${tradeId}: ${response.status} ${response.text}`);
    last = response.body.message;
    if (done(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(
    `trade ${tradeId} did not reach the expected state in ${timeoutMs} ms; last: ${JSON.stringify(last)}`,
  );
}

export const isTerminated = (trade: any) => trade.trade_state === 'terminated';
export const isOutstanding = (trade: any) =>
  trade.trade_state === 'active' && trade.settlement_state === 'obligations_outstanding';

/**
 * An open spot trade accepted at `acceptedMs`, stored with no execution (as if the process died before
 * starting one). Its parties hold nothing, so once past the 2-day deadline an execution defaults it.
 */
export async function storeUnfundedTrade(
  context: AppContext,
  acceptedMs: number,
  settlementAtMs: number | null = null,
): Promise<Trade> {
  const report = validateTradeReport(
    {
      client_trade_id: `open-${newId()}`,
      session_id: '',
      trade_reporter: 'ops',
      platform_code: 'PLAT01',
      symbol: 'BTC/USD',
      product_type: 'spot',
      trade_type: 'regular',
      trade_price: '100',
      trade_quantity: '1',
      physical_delivery: true,
      transaction_timestamp: acceptedMs,
      parties_anonymous: false,
      parties: [
        { side: 'buy', participant_code: 'BUYER1', asset: 'BTC' },
        { side: 'sell', participant_code: 'SELLR1', asset: 'USD' },
      ],
    },
    { platformCode: 'PLAT01', nowMs: acceptedMs },
  );
  if (!report.ok) throw new Error(report.errors.join('; '));
  const trade = {
    ...acceptedTrade(report.value, { tradeId: newId(), nowMs: acceptedMs, accountGroups: ['PLAT01', 'PLAT01'] }),
    settlement_timestamp: settlementAtMs,
  };
  await transactWrite(context, tradeItems(context, trade));
  return trade;
}

/**
 * A trade as its item stores it (list filters too), and as its list entry for `platformCode` holds it (undefined
 * for an entry from before entries held the trade), read consistently: the two must agree.
 */
export async function tradeAsListed(
  on: AppContext,
  tradeId: string,
  platformCode: string,
): Promise<{ stored: StoredTrade; listed: StoredTrade | undefined }> {
  const read = (Key: Record<string, string>) =>
    on.db.send(new GetCommand({ TableName: on.tables.main, Key, ConsistentRead: true }));
  const [trade, entry] = await Promise.all([
    read(tradeEntity.key({ trade_id: tradeId })),
    read(tradeVisibilityEntity.key({ trade_id: tradeId, platform_code: platformCode })),
  ]);
  return { stored: tradeEntity.parse(trade.Item!), listed: tradeOfEntry(entry.Item!) };
}
