import { sweepOpenTrades } from '../../lib/settlement/sweep-open-trades.js';

/** Scheduled: gives every open trade a live settlement execution (design section 7). */
export const handler = async () => sweepOpenTrades();
