import { randomUUID } from 'node:crypto';
import { afterAll } from 'vitest';
import { clock } from '../../lib/clock.js';
import { resetConfig } from '../../lib/config.js';
import { startLocalWorkflows, type LocalRunnerOptions } from '../../infra/local/workflow-runner.js';
import type { TestPlatform } from './service.js';

/**
 * Starts the local settlement runner in this test file's process with short sessions, without resuming
 * open trades (other files share the DynamoDB and their trades are theirs), and stops it after the file.
 */
export async function startTestWorkflows(settings: { sessionSeconds?: number; spotDeadlineSeconds?: number } & LocalRunnerOptions = {}) {
  process.env.SETTLEMENT_SESSION_SECONDS = String(settings.sessionSeconds ?? 1);
  if (settings.spotDeadlineSeconds !== undefined) process.env.SPOT_SETTLEMENT_DEADLINE_SECONDS = String(settings.spotDeadlineSeconds);
  resetConfig();
  // No periodic sweep: other files' runners share this database, and their trades are theirs.
  const stop = await startLocalWorkflows({ resume: false, tasks: settings.tasks, sweepIntervalMs: 0 });
  afterAll(stop);
  return stop;
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
    transaction_timestamp: clock.nowMs() - 1_000,
    parties_anonymous: false,
    parties: [
      { side: 'buy', participant_code: options.buyer, asset: base, settling: true },
      { side: 'sell', participant_code: options.seller, asset: quote, settling: true },
    ],
    ...options.overrides,
  };
}

/** Polls GET /trades/{id} until `done` holds for the trade (or fails with the last state seen). */
export async function waitForTrade(platform: TestPlatform, tradeId: string, done: (trade: any) => boolean, timeoutMs = 15_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: any;
  while (Date.now() < deadline) {
    const response = await platform.get(`/trades/${tradeId}`);
    if (response.status !== 200) throw new Error(`GET /trades/${tradeId}: ${response.status} ${response.text}`);
    last = response.body.message;
    if (done(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`trade ${tradeId} did not reach the expected state in ${timeoutMs} ms; last: ${JSON.stringify(last)}`);
}

export const isTerminated = (trade: any) => trade.trade_state === 'terminated';
export const isOutstanding = (trade: any) => trade.trade_state === 'active' && trade.settlement_state === 'obligations_outstanding';
