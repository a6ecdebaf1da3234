import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  type Admission,
  decide,
  type RateLimiter,
  rememberingFull,
  SUSTAINED_WINDOW_SECONDS,
  windowOf,
} from '../domain/rate-limits.js';
import type { RateLimit } from '../domain/rate-limits.js';
import { listApiKeys } from './api-keys.js';
import { rateWindowEntity } from './entities/window.js';
import { documentItemOf } from './table/returned-item.js';
import { apiKeyEntity } from './entities/api-key.js';
import { platformEntity } from './entities/platform.js';
import { transactWrite } from './table/transactions.js';
import { type TaggedItem } from './table/transaction-items.js';
import type { AppContext } from '../context.js';

/** A window's counter item outlives its window by this much (TTL deletion is lazy; nothing reads an old window). */
const WINDOW_KEPT_SECONDS = 60;

/**
 * The deployed counter: one item per API key and sustained window in the TTL table, holding the window's
 * total and a count per second. Tokens are taken from it in blocks: one UpdateItem adds the block to both
 * counts, conditioned on both staying within their quota, and this process admits that many requests of the
 * key from memory, during the second the block was counted in. A block's size follows the key's demand in this
 * process (about half of what it used in its last busy second, at most an eighth of the burst), so a quiet key
 * pays one write per request as before and a busy one a write per several; what a process took and did not use
 * goes back to the window's total (one write, with the key's next request here), so the sustained limit is not spent
 * on tokens nobody used. Across every container of every function the counts hold: no window admits more than
 * its quota. A refused request writes nothing and learns the counts from the failed condition
 * (ReturnValuesOnConditionCheckFailure); with room for fewer than a block, it takes what is left. A container
 * that refused a key refuses its further requests in that window from memory, without a call
 * (`rememberingFull`). One item takes about 1,000 writes a second, hence MAX_RATE_LIMIT.
 */
export function tableRateLimiter(ctx: Pick<AppContext, 'db' | 'tables'>): RateLimiter {
  const held = new Map<string, HeldTokens>();
  // A Lambda container serves one request at a time; a process serving many at once (the local server with this
  // counter, as the bench runs it) would otherwise take a block for each request that finds none left, hold far
  // more than it uses and refuse requests under the limit. So a key's requests wait for its take in flight here,
  // then use what that take brought (a take that failed leaves them to take their own).
  const taking = new Map<string, Promise<Admission>>();
  return rememberingFull(async (apiKey, limit, nowMs) => {
    for (let inFlight = taking.get(apiKey); inFlight; inFlight = taking.get(apiKey)) {
      await inFlight.catch(() => undefined);
    }
    const at = { ...windowOf(nowMs), nowMs };
    const previous = held.get(apiKey);
    if (previous?.second === at.nowSeconds && previous.left > 0) {
      previous.left -= 1;
      previous.used += 1;
      return { admitted: true };
    }
    const take = takeBlock(ctx, held, apiKey, limit, at);
    taking.set(apiKey, take);
    try {
      return await take;
    } finally {
      taking.delete(apiKey);
    }
  });
}

/** A new block of the key's tokens for this second, one admitting this request (the rest held for the next). */
async function takeBlock(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  held: Map<string, HeldTokens>,
  apiKey: string,
  limit: RateLimit,
  at: { windowStart: number; second: number; nowSeconds: number; nowMs: number },
): Promise<Admission> {
  const previous = held.get(apiKey);
  const tokens: HeldTokens =
    previous?.second === at.nowSeconds
      ? previous
      : {
          second: at.nowSeconds,
          windowStart: at.windowStart,
          left: 0,
          used: 0,
          busiest: lastSecondUse(previous, at.nowSeconds),
        };
  if (tokens !== previous) {
    if (previous && previous.left > 0) await giveBack(ctx, apiKey, previous);
    forgetIdle(held, at.nowSeconds);
    held.set(apiKey, tokens);
  }
  const taken = await takeTokens(ctx, apiKey, limit, at, blockSize(limit, tokens));
  if (!taken.admitted) return taken;
  tokens.left += taken.count - 1;
  tokens.used += 1;
  return { admitted: true };
}

/** What this process holds of a key's tokens: counted in `second` (epoch seconds), `left` not yet used. */
interface HeldTokens {
  second: number;
  windowStart: number;
  left: number;
  used: number;
  /** What this process used of the key in the second before: what sizes the next blocks. */
  busiest: number;
}

/** Keys whose held tokens are kept at most: past it, entries from before the last second go. */
const MAX_HELD_KEYS = 10_000;

function forgetIdle(held: Map<string, HeldTokens>, nowSeconds: number): void {
  if (held.size < MAX_HELD_KEYS) return;
  for (const [key, tokens] of held) if (tokens.second < nowSeconds - 1) held.delete(key);
}

/** The demand the next blocks follow: what this process used in the second just before, else nothing. */
function lastSecondUse(previous: HeldTokens | undefined, nowSeconds: number): number {
  return previous?.second === nowSeconds - 1 ? previous.used : 0;
}

/** Half the demand seen (this second's so far or the last one's), at least 1, at most an eighth of the burst. */
function blockSize(limit: RateLimit, tokens: HeldTokens): number {
  const demand = Math.max(tokens.busiest, tokens.used);
  return Math.max(1, Math.min(Math.floor(demand / 2), Math.floor(limit.burst / 8)));
}

/** Adds `count` to the window's counts if both stay within quota; with less room, what room there is. */
async function takeTokens(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  apiKey: string,
  limit: RateLimit,
  at: { windowStart: number; second: number; nowMs: number },
  count: number,
): Promise<{ admitted: true; count: number } | Extract<Admission, { admitted: false }>> {
  const quota = limit.rps * SUSTAINED_WINDOW_SECONDS;
  try {
    const update = rateWindowEntity.update(
      ctx.tables,
      { api_key: apiKey, window_start: at.windowStart },
      {
        update: 'ADD #total :count, #second :count SET #ttl = if_not_exists(#ttl, :ttl)',
        condition:
          '(attribute_not_exists(#total) OR #total <= :totalRoom) AND (attribute_not_exists(#second) OR #second <= :secondRoom)',
        names: { '#total': 'total', '#second': `s${at.second}`, '#ttl': 'ttl' },
        values: {
          ':count': count,
          ':totalRoom': quota - count,
          ':secondRoom': limit.burst - count,
          ':ttl': at.windowStart + SUSTAINED_WINDOW_SECONDS + WINDOW_KEPT_SECONDS,
        },
      },
    );
    await ctx.db.send(new UpdateCommand({ ...update.Update, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }));
    return { admitted: true, count };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    // The low-level item (the document client does not unmarshall this one), as the window's counts.
    const returned = documentItemOf(error.Item);
    const old: Readonly<Record<string, number | undefined>> = returned ? rateWindowEntity.parse(returned) : {};
    const counts = { total: old.total ?? 0, inSecond: old[`s${at.second}`] ?? 0 };
    const room = Math.min(quota - counts.total, limit.burst - counts.inSecond);
    if (room >= 1 && room < count) return takeTokens(ctx, apiKey, limit, at, room);
    const admission = decide(limit, counts, at.nowMs);
    // The condition failed, so one of the counts is at its quota; `decide` names which and when it frees up.
    return admission.admitted
      ? (decide(limit, { total: quota, inSecond: limit.burst }, at.nowMs) as Extract<Admission, { admitted: false }>)
      : admission;
  }
}

/** Tokens a process took and its second left unused go back to the window's total (not to the second's count: it has passed). */
async function giveBack(ctx: Pick<AppContext, 'db' | 'tables'>, apiKey: string, tokens: HeldTokens): Promise<void> {
  const update = rateWindowEntity.update(
    ctx.tables,
    { api_key: apiKey, window_start: tokens.windowStart },
    {
      update: 'ADD #total :unused',
      condition: 'attribute_exists(#total)',
      names: { '#total': 'total' },
      values: { ':unused': -tokens.left },
    },
  );
  // Best effort: a return that fails leaves the window's total high, which refuses early, never admits more.
  await ctx.db.send(new UpdateCommand(update.Update)).catch(() => undefined);
}

/**
 * Sets a platform's limit (ops): on the platform item, with the audit record, in one transaction; then on
 * each of its API key items, where the signature check finds it with the key it reads anyway (so a limit
 * costs a request no read). A key created later copies the platform's (`createApiKey`). Running it again
 * repairs a copy an interrupted run missed. False when the platform does not exist; nothing is written then.
 */
export async function setPlatformRateLimit(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  platformCode: string,
  limit: RateLimit,
  audit: TaggedItem,
): Promise<{ keys: number } | false> {
  const setLimit = {
    update: 'SET rate_limit = :limit',
    condition: 'attribute_exists(pk)',
    values: { ':limit': { rps: limit.rps, burst: limit.burst } },
  };
  let missing = false;
  await transactWrite(ctx, [
    {
      item: platformEntity.update(ctx.tables, { platform_code: platformCode }, setLimit),
      onConditionFailed: () => {
        missing = true;
        return new PlatformMissingError();
      },
    },
    audit,
  ]).catch((error: unknown) => {
    if (!(error instanceof PlatformMissingError)) throw error;
  });
  if (missing) return false;
  const apiKeys = await listApiKeys(ctx, platformCode);
  for (const key of apiKeys) {
    await ctx.db.send(new UpdateCommand(apiKeyEntity.update(ctx.tables, { api_key: key.api_key }, setLimit).Update));
  }
  return { keys: apiKeys.length };
}

/** Only tells "no such platform" apart inside `setPlatformRateLimit`; never leaves this module. */
class PlatformMissingError extends Error {
  override readonly name = 'PlatformMissingError';
}
