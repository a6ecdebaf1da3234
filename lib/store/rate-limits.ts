import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
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
 * total and a count per second. A request is one UpdateItem conditioned on both counts being under their
 * quota, so it costs one write (the item is a few dozen bytes) and no read; a refused one writes nothing and
 * learns the counts from the failed condition (ReturnValuesOnConditionCheckFailure). Every container of every
 * function sees the same counts; a container that refused a key refuses its further requests in that window
 * from memory, without a call (`rememberingFull`). One item takes about 1,000 writes a second, hence MAX_RATE_LIMIT.
 */
export function tableRateLimiter(ctx: Pick<AppContext, 'db' | 'tables'>): RateLimiter {
  return rememberingFull(async (apiKey, limit, nowMs) => {
    const { windowStart, second } = windowOf(nowMs);
    try {
      const update = rateWindowEntity.update(
        ctx.tables,
        { api_key: apiKey, window_start: windowStart },
        {
          update: 'ADD #total :one, #second :one SET #ttl = if_not_exists(#ttl, :ttl)',
          condition:
            '(attribute_not_exists(#total) OR #total < :quota) AND (attribute_not_exists(#second) OR #second < :burst)',
          names: { '#total': 'total', '#second': `s${second}`, '#ttl': 'ttl' },
          values: {
            ':one': 1,
            ':quota': limit.rps * SUSTAINED_WINDOW_SECONDS,
            ':burst': limit.burst,
            ':ttl': windowStart + SUSTAINED_WINDOW_SECONDS + WINDOW_KEPT_SECONDS,
          },
        },
      );
      await ctx.db.send(new UpdateCommand({ ...update.Update, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }));
      return { admitted: true };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      // The low-level item (the document client does not unmarshall this one), as the window's counts.
      const returned = documentItemOf(error.Item);
      const old: Readonly<Record<string, number | undefined>> = returned ? rateWindowEntity.parse(returned) : {};
      const count = (name: string) => old[name] ?? 0;
      const admission = decide(limit, { total: count('total'), inSecond: count(`s${second}`) }, nowMs);
      // The condition failed, so one of the counts is at its quota; `decide` names which and when it frees up.
      return admission.admitted
        ? decide(limit, { total: limit.rps * SUSTAINED_WINDOW_SECONDS, inSecond: limit.burst }, nowMs)
        : admission;
    }
  });
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
