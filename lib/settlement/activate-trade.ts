import { assert } from '../domain/assert.js';
import type { SettlementTaskResult } from '../domain/workflow-io.js';
import { updateTrade } from '../store/trades.js';
import type { AppContext } from '../context.js';
import { closed, now, readTrade } from './trade-task.js';

// Apart from the tasks that book (settle-trade.ts): the booking engine is no part of the activation's bundle,
// and with it neither is the hot-account path the engine imports on contention, which would otherwise load
// with it (a module reached by both a function's code and an `import()` is split into a chunk the function
// imports, whether or not its own code calls it).

/** `accepted -> active`. Already active or terminated: nothing to do. */
export async function activateTrade(ctx: AppContext, tradeId: string): Promise<SettlementTaskResult> {
  const trade = await readTrade(ctx, tradeId);
  if (trade.trade_state === 'terminated') return closed(trade);
  if (trade.trade_state === 'accepted') {
    const moved = await updateTrade(ctx, trade, ['accepted'], { trade_state: 'active' }, now(ctx));
    if (!moved) {
      const current = await readTrade(ctx, tradeId);
      // updateTrade gives up only once the trade has left `accepted`, and states only move forward.
      assert(current.trade_state !== 'accepted', () => `trade ${tradeId}: activation lost, yet still accepted`);
      if (current.trade_state === 'terminated') return closed(current);
    }
  }
  return { outcome: 'outstanding', trade_state: 'active' };
}
