import type { AppContext } from '../context.js';

/** Seconds (what X-SVC-TIMESTAMP uses) alongside milliseconds and ISO 8601, so no client has to convert. */
export function serverTime(ctx: AppContext) {
  const nowMs = ctx.clock.nowMs();
  return { epoch: Math.floor(nowMs / 1000), epoch_ms: nowMs, iso_8601: new Date(nowMs).toISOString() };
}
