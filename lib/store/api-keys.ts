import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { NotFoundError, ValidationError } from '../domain/errors.js';
import { keys } from './keys.js';
import { decryptSecret, encryptSecret } from '../crypto/secret-cipher.js';
import { readInteger, readOptionalInteger } from './table/integers.js';
import type { RateLimit } from '../domain/rate-limits.js';
import type { AppContext } from '../context.js';
import { PERMISSION_AREAS, type PermissionArea } from '../domain/caller.js';

export interface ApiKeyCredentials {
  api_key: string;
  /** Base64, as clients use it: they base64-decode it into the HMAC key. */
  api_secret: string;
  passphrase: string;
}

interface StoredApiKey {
  api_key: string;
  platform_code: string;
  permissions: PermissionArea[];
  revoked_at: number | null;
  secretCiphertext: string;
  passphraseSalt: string;
  passphraseHash: string;
  /** Its platform's rate limit as ops set it (`platform limits`), copied here so a request reads it with the key; absent: the default. */
  rate_limit?: RateLimit;
}

/** A stored limit (`{ rps, burst }`, numbers read with wrapNumbers), or undefined. */
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

export function passphraseMatches(stored: StoredApiKey, presented: string): boolean {
  const expected = Buffer.from(stored.passphraseHash, 'base64');
  const actual = Buffer.from(hashPassphrase(presented, stored.passphraseSalt), 'base64');
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
  const platform = await ctx.db.send(
    new GetCommand({
      TableName: ctx.tables.main,
      Key: keys.platform(platformCode),
      ProjectionExpression: 'rate_limit',
    }),
  );
  const rateLimit = readRateLimit(platform.Item?.rate_limit);
  await ctx.db.send(
    new PutCommand({
      TableName: ctx.tables.main,
      Item: {
        ...keys.apiKey(credentials.api_key),
        gsi1pk: keys.apiKeysOfPlatform(platformCode),
        gsi1sk: credentials.api_key,
        type: 'api_key',
        api_key: credentials.api_key,
        platform_code: platformCode,
        permissions: [...new Set(permissions)],
        secret_ciphertext: await encryptSecret(ctx, credentials.api_secret),
        passphrase_salt: salt,
        passphrase_hash: hashPassphrase(credentials.passphrase, salt),
        created_at: ctx.clock.nowMs(),
        ...(rateLimit && { rate_limit: rateLimit }),
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
  return credentials;
}

/** Longer than any key we issue (32 characters); DynamoDB would refuse the lookup of a key over 2 KB. */
const MAX_API_KEY_LENGTH = 128;

export async function getApiKey(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  apiKey: string,
): Promise<StoredApiKey | undefined> {
  if (apiKey.length > MAX_API_KEY_LENGTH) return undefined;
  const out = await ctx.db.send(new GetCommand({ TableName: ctx.tables.main, Key: keys.apiKey(apiKey) }));
  const item = out.Item;
  if (!item) return undefined;
  return {
    api_key: item.api_key,
    platform_code: item.platform_code,
    permissions: item.permissions,
    revoked_at: readOptionalInteger(item.revoked_at),
    secretCiphertext: item.secret_ciphertext,
    passphraseSalt: item.passphrase_salt,
    passphraseHash: item.passphrase_hash,
    rate_limit: readRateLimit(item.rate_limit),
  };
}

/**
 * Decrypting a secret costs a KMS call on AWS, so the context keeps decrypted secrets for a few minutes (a
 * warm Lambda's context lives as long as its container). Revocation is still seen at once: the key item is
 * read on every request.
 */
const SECRET_KEPT_MS = 5 * 60_000;

export async function secretBytes(
  ctx: Pick<AppContext, 'clock' | 'kms' | 'config' | 'caches'>,
  stored: StoredApiKey,
): Promise<Buffer> {
  const cache = ctx.caches.apiSecrets;
  const cached = cache.get(stored.secretCiphertext);
  const nowMs = ctx.clock.nowMs();
  if (cached && cached.untilMs > nowMs) return cached.secret;
  const secret = Buffer.from(await decryptSecret(ctx, stored.secretCiphertext), 'base64');
  cache.set(stored.secretCiphertext, { secret, untilMs: nowMs + SECRET_KEPT_MS });
  return secret;
}

export async function revokeApiKey(ctx: Pick<AppContext, 'clock' | 'db' | 'tables'>, apiKey: string): Promise<void> {
  try {
    await ctx.db.send(
      new UpdateCommand({
        TableName: ctx.tables.main,
        Key: keys.apiKey(apiKey),
        UpdateExpression: 'SET revoked_at = if_not_exists(revoked_at, :now)',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':now': ctx.clock.nowMs() },
      }),
    );
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) throw new NotFoundError(`api key not found: ${apiKey}`);
    throw error;
  }
}

export async function listApiKeys(ctx: Pick<AppContext, 'db' | 'tables'>, platformCode: string) {
  const out = await ctx.db.send(
    new QueryCommand({
      TableName: ctx.tables.main,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.apiKeysOfPlatform(platformCode) },
    }),
  );
  return (out.Items ?? []).map((item) => ({
    api_key: item.api_key as string,
    permissions: item.permissions as string[],
    revoked_at: readOptionalInteger(item.revoked_at),
  }));
}
