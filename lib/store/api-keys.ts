import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { NotFoundError, ValidationError } from '../domain/errors.js';
import { apiKeyEntity, type ApiKey } from './entities/api-key.js';
import { platformEntity } from './entities/platform.js';
import { decryptSecret, encryptSecret } from '../crypto/secret-cipher.js';
import { readInteger } from './table/integers.js';
import type { RateLimit } from '../domain/rate-limits.js';
import type { AppContext } from '../context.js';
import type { TransactItem } from './table/transaction-items.js';
import { PERMISSION_AREAS, type PermissionArea } from '../domain/caller.js';

export interface ApiKeyCredentials {
  api_key: string;
  /** Base64, as clients use it: they base64-decode it into the HMAC key. */
  api_secret: string;
  passphrase: string;
}

export type { ApiKey };

/** A limit as an audit entry's changes hold it (`{ rps, burst }`, numbers read with wrapNumbers), or undefined. */
export function readRateLimit(value: unknown): RateLimit | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const { rps, burst } = value as Record<string, unknown>;
  return { rps: readInteger(rps), burst: readInteger(burst) };
}

/**
 * The passphrase is random and high-entropy (we generate it), so a salted SHA-256 is enough and keeps the
 * per-request check cheap; it is compared in constant time.
 */
function hashPassphrase(passphrase: string, salt: string): string {
  return createHash('sha256').update(salt).update(passphrase).digest('base64');
}

export function passphraseMatches(stored: ApiKey, presented: string): boolean {
  const expected = Buffer.from(stored.passphrase_hash, 'base64');
  const actual = Buffer.from(hashPassphrase(presented, stored.passphrase_salt), 'base64');
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/**
 * Issues a key with at least one permission area: an empty list is a mistake, never "everything".
 * `fixed` credentials exist for signature test vectors; everything else gets random ones.
 */
export async function createApiKey(
  ctx: Pick<AppContext, 'clock' | 'db' | 'tables' | 'kms' | 'config'>,
  platformCode: string,
  permissions: readonly PermissionArea[],
  fixed?: ApiKeyCredentials,
): Promise<ApiKeyCredentials> {
  const unknown = permissions.filter((area) => !(PERMISSION_AREAS as readonly string[]).includes(area));
  if (permissions.length === 0) throw new ValidationError(['permissions: a key needs at least one permission area']);
  if (unknown.length) throw new ValidationError([`permissions: unknown areas ${unknown.join(', ')}`]);
  const credentials: ApiKeyCredentials = fixed ?? {
    api_key: randomBytes(24).toString('base64url'),
    api_secret: randomBytes(32).toString('base64'),
    passphrase: randomBytes(18).toString('base64url'),
  };
  const salt = randomBytes(16).toString('base64');
  // The platform's limit travels with each of its keys (`setPlatformRateLimit`): a new key starts with it.
  const platform = await ctx.db.send(new GetCommand(platformEntity.get(ctx.tables, { platform_code: platformCode })));
  const rateLimit = platform.Item && platformEntity.parse(platform.Item).rate_limit;
  await ctx.db.send(
    new PutCommand(
      apiKeyEntity.put(
        ctx.tables,
        {
          api_key: credentials.api_key,
          platform_code: platformCode,
          permissions: [...new Set(permissions)],
          secret_ciphertext: await encryptSecret(ctx, credentials.api_secret),
          passphrase_salt: salt,
          passphrase_hash: hashPassphrase(credentials.passphrase, salt),
          created_at: ctx.clock.nowMs(),
          rate_limit: rateLimit,
        },
        { condition: 'attribute_not_exists(pk)' },
      ).Put,
    ),
  );
  return credentials;
}

/** Longer than any key we issue (32 characters); DynamoDB would refuse the lookup of a key over 2 KB. */
const MAX_API_KEY_LENGTH = 128;

async function readKeyItem(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  apiKey: string,
): Promise<Record<string, unknown> | undefined> {
  if (apiKey.length > MAX_API_KEY_LENGTH) return undefined;
  const out = await ctx.db.send(new GetCommand(apiKeyEntity.get(ctx.tables, { api_key: apiKey })));
  return out.Item;
}

export async function getApiKey(ctx: Pick<AppContext, 'db' | 'tables'>, apiKey: string): Promise<ApiKey | undefined> {
  const item = await readKeyItem(ctx, apiKey);
  return item ? apiKeyEntity.parse(item) : undefined;
}

/**
 * How old a key item a safe request (a GET of a route that writes nothing) may be verified against, and a
 * booking route's request, whose transaction checks the key is unchanged (`apiKeyUnchangedCheck`). Reading the
 * key on every request cost each a round trip of its own; kept this long, a revocation (or a new rate limit)
 * reaches reads within 5 s, and writes at once: a booking's transaction checks it, other writes read the key.
 */
export const KEY_ITEM_KEPT_FOR_READS_MS = 5_000;

/** Past this many keys kept, the ones too old to use are dropped (only keys that exist are kept). */
const KEY_ITEMS_SWEPT_PAST = 1_000;

/**
 * The key item a request is verified against: for a safe request one this context read less than
 * `KEY_ITEM_KEPT_FOR_READS_MS` ago, else read now (and kept, so a revocation a write sees reaches this
 * context's reads at once too). Only the item is kept: the caller still checks the passphrase and the
 * signature of every request against it. An unknown key is never kept, so guessed keys cannot fill the cache.
 */
export async function apiKeyForRequest(
  ctx: Pick<AppContext, 'clock' | 'db' | 'tables' | 'caches'>,
  apiKey: string,
  safe: boolean,
): Promise<ApiKey | undefined> {
  const kept = ctx.caches.apiKeys;
  const nowMs = ctx.clock.nowMs();
  // A clock that went back (a test's) makes the age negative: read again rather than trust it.
  const fresh = (readAtMs: number) => nowMs >= readAtMs && nowMs - readAtMs < KEY_ITEM_KEPT_FOR_READS_MS;
  if (safe) {
    const entry = kept.get(apiKey);
    if (entry && fresh(entry.readAtMs)) return apiKeyEntity.parse(entry.item);
  }
  // Aged from before the read: a revocation committed while it was in flight is not kept past the limit.
  const item = await readKeyItem(ctx, apiKey);
  if (!item) {
    kept.delete(apiKey);
    return undefined;
  }
  const key = apiKeyEntity.parse(item);
  if (kept.size >= KEY_ITEMS_SWEPT_PAST) {
    for (const [name, entry] of kept) if (!fresh(entry.readAtMs)) kept.delete(name);
  }
  kept.set(apiKey, { item, readAtMs: nowMs });
  return key;
}

/**
 * Decrypting a secret costs a KMS call on AWS, so the context keeps decrypted secrets for a few minutes (a
 * warm Lambda's context lives as long as its container). Keeping the secret delays no revocation: whether the
 * key is revoked is the key item's, read as `apiKeyForRequest` says.
 */
const SECRET_KEPT_MS = 5 * 60_000;

export async function secretBytes(
  ctx: Pick<AppContext, 'clock' | 'kms' | 'config' | 'caches'>,
  stored: ApiKey,
): Promise<Buffer> {
  const cache = ctx.caches.apiSecrets;
  const cached = cache.get(stored.secret_ciphertext);
  const nowMs = ctx.clock.nowMs();
  if (cached && cached.untilMs > nowMs) return cached.secret;
  const secret = Buffer.from(await decryptSecret(ctx, stored.secret_ciphertext), 'base64');
  cache.set(stored.secret_ciphertext, { secret, untilMs: nowMs + SECRET_KEPT_MS });
  return secret;
}

export async function revokeApiKey(ctx: Pick<AppContext, 'clock' | 'db' | 'tables'>, apiKey: string): Promise<void> {
  try {
    await ctx.db.send(
      new UpdateCommand(
        apiKeyEntity.update(
          ctx.tables,
          { api_key: apiKey },
          {
            update: 'SET revoked_at = if_not_exists(revoked_at, :now)',
            condition: 'attribute_exists(pk)',
            values: { ':now': ctx.clock.nowMs() },
          },
        ).Update,
      ),
    );
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) throw new NotFoundError(`api key not found: ${apiKey}`);
    throw error;
  }
}

export async function listApiKeys(ctx: Pick<AppContext, 'db' | 'tables'>, platformCode: string) {
  const out = await ctx.db.send(
    new QueryCommand(
      apiKeyEntity.query(ctx.tables, 'gsi1', apiKeyEntity.indexPartition('gsi1', { platform_code: platformCode })),
    ),
  );
  return (out.Items ?? []).map((item) => {
    const key = apiKeyEntity.parse(item);
    return { api_key: key.api_key, permissions: key.permissions, revoked_at: key.revoked_at ?? null };
  });
}

/**
 * For a booking's transaction: the key is still the one its request was verified against (not revoked, the same
 * secret and passphrase). A booking route verifies against a key item read up to `KEY_ITEM_KEPT_FOR_READS_MS`
 * ago and carries this check instead of reading the key again: a revocation and a booking both touch the key
 * item, so DynamoDB orders them, and a revoked key books nothing from the moment of revocation.
 */
export function apiKeyUnchangedCheck(ctx: Pick<AppContext, 'tables'>, key: ApiKey): TransactItem {
  return apiKeyEntity.check(
    ctx.tables,
    { api_key: key.api_key },
    {
      condition:
        'attribute_exists(pk) AND attribute_not_exists(revoked_at) AND secret_ciphertext = :secret AND passphrase_hash = :passphrase',
      values: { ':secret': key.secret_ciphertext, ':passphrase': key.passphrase_hash },
    },
  );
}
