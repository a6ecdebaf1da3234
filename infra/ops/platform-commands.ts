import { AMOUNT_PATTERN, Money } from '../../lib/domain/money.js';
import { priceWithSpread } from '../../lib/domain/quotes.js';
import { createApiKey, listApiKeys, revokeApiKey } from '../../lib/store/api-keys.js';
import { PERMISSION_AREAS, type PermissionArea } from '../../lib/domain/caller.js';
import { createPlatform, getPlatform } from '../../lib/store/platforms.js';
import { rateLimitProblem, type RateLimit } from '../../lib/domain/rate-limits.js';
import { setPlatformRateLimit } from '../../lib/store/rate-limits.js';
import { optional, required, UsageError, type Commands } from './command.js';

/** Absent: every area. Given: a non-empty list of known areas (`--permissions ''` is a mistake, not "all"). */
function parsePermissions(text: string | undefined): PermissionArea[] {
  if (text === undefined) return [...PERMISSION_AREAS];
  const areas = text.split(',').map((area) => area.trim());
  if (areas.some((area) => area === ''))
    throw new UsageError(
      `--permissions needs one or more areas separated by commas (known: ${PERMISSION_AREAS.join(', ')})`,
    );
  const unknown = areas.filter((area) => !(PERMISSION_AREAS as readonly string[]).includes(area));
  if (unknown.length)
    throw new UsageError(`unknown permission areas: ${unknown.join(', ')} (known: ${PERMISSION_AREAS.join(', ')})`);
  return areas as PermissionArea[];
}

/**
 * The spread in basis points, checked with the rule quotes apply (as `platform spread` does): a platform
 * stored with a spread that isn't a decimal would answer every RFQ with a 500.
 */
function parseSpreadBps(text: string | undefined): string {
  if (text === undefined) return '0';
  if (!AMOUNT_PATTERN.test(text))
    throw new UsageError('--spread-bps must be a decimal number of basis points such as "25" or "12.5"');
  const bps = new Money(text);
  priceWithSpread(new Money(1), 'sell', bps);
  return bps.toFixed();
}

/** `--rps` and `--burst` as whole numbers of requests (no sign, no decimals, no exponent), within the limits' rules. */
function parseRateLimit(rps: string, burst: string): RateLimit {
  for (const [name, text] of [
    ['rps', rps],
    ['burst', burst],
  ] as const) {
    if (!/^\d+$/.test(text) || Number(text) < 1)
      throw new UsageError(`--${name} must be a positive whole number of requests, not '${text}'`);
  }
  const limit = { rps: Number(rps), burst: Number(burst) };
  const problem = rateLimitProblem(limit);
  if (problem) throw new UsageError(`--${problem}`);
  return limit;
}

/** Platforms and their API keys. */
export const platformCommands: Commands = {
  'platform create': {
    usage: 'platform create --name NAME [--spread-bps BPS] [--permissions area,area]',
    options: {
      name: { type: 'string', required: true },
      'spread-bps': { type: 'string' },
      permissions: { type: 'string' },
    },
    mutates: true,
    run: async (flags, ctx, audit) => {
      // Every flag is checked before the first write, so a typo never leaves a platform without a key.
      const permissions = parsePermissions(optional(flags, 'permissions'));
      const spreadBps = parseSpreadBps(optional(flags, 'spread-bps'));
      const platform = await createPlatform(ctx, required(flags, 'name'), spreadBps);
      const credentials = await createApiKey(ctx, platform.platform_code, permissions);
      // The secret and passphrase are printed once, never recorded.
      await audit.record({
        platform_code: platform.platform_code,
        participant_code: platform.participant_code,
        spread_bps: spreadBps,
        api_key: credentials.api_key,
        permissions,
      });
      return { platform_code: platform.platform_code, participant_code: platform.participant_code, ...credentials };
    },
  },
  'platform limits': {
    usage: 'platform limits --platform CODE --rps N --burst N',
    options: {
      platform: { type: 'string', required: true },
      rps: { type: 'string', required: true },
      burst: { type: 'string', required: true },
    },
    mutates: true,
    // Checked before the CLI connects: a bad rate reads and writes nothing.
    check: (flags) => void parseRateLimit(required(flags, 'rps'), required(flags, 'burst')),
    run: async (flags, ctx, audit) => {
      const limit = parseRateLimit(required(flags, 'rps'), required(flags, 'burst'));
      const platformCode = required(flags, 'platform');
      const set = await setPlatformRateLimit(
        ctx,
        platformCode,
        limit,
        audit.item({ platform_code: platformCode, rate_limit: limit }),
      );
      if (!set) throw new UsageError(`unknown platform ${platformCode}`);
      return { platform_code: platformCode, rate_limit: limit, api_keys_updated: set.keys };
    },
  },
  'key create': {
    usage: 'key create --platform CODE [--permissions area,area]',
    options: { platform: { type: 'string', required: true }, permissions: { type: 'string' } },
    mutates: true,
    run: async (flags, ctx, audit) => {
      const platformCode = required(flags, 'platform');
      const permissions = parsePermissions(optional(flags, 'permissions'));
      if (!(await getPlatform(ctx, platformCode))) throw new UsageError(`unknown platform ${platformCode}`);
      const credentials = await createApiKey(ctx, platformCode, permissions);
      await audit.record({ platform_code: platformCode, api_key: credentials.api_key, permissions });
      return { platform_code: platformCode, ...credentials };
    },
  },
  'key revoke': {
    usage: 'key revoke --api-key KEY',
    options: { 'api-key': { type: 'string', required: true } },
    mutates: true,
    run: async (flags, ctx, audit) => {
      const apiKey = required(flags, 'api-key');
      await revokeApiKey(ctx, apiKey);
      await audit.record({ api_key: apiKey, revoked: true });
      return { api_key: apiKey, revoked: true };
    },
  },
  'key list': {
    usage: 'key list --platform CODE',
    options: { platform: { type: 'string', required: true } },
    run: async (flags, ctx) => ({
      platform_code: required(flags, 'platform'),
      keys: await listApiKeys(ctx, required(flags, 'platform')),
    }),
  },
};
