import { createApiKey, listApiKeys, PERMISSION_AREAS, revokeApiKey, type PermissionArea } from '../../lib/store/api-keys.js';
import { createPlatform, getPlatform } from '../../lib/store/platforms.js';
import { required, UsageError, type Commands } from './command.js';

function parsePermissions(text: string | undefined): PermissionArea[] {
  if (!text) return [...PERMISSION_AREAS];
  const areas = text.split(',').map((area) => area.trim());
  const unknown = areas.filter((area) => !(PERMISSION_AREAS as readonly string[]).includes(area));
  if (unknown.length) throw new UsageError(`unknown permission areas: ${unknown.join(', ')} (known: ${PERMISSION_AREAS.join(', ')})`);
  return areas as PermissionArea[];
}

/** Platforms and their API keys. */
export const platformCommands: Commands = {
  'platform create': {
    usage: 'platform create --name NAME [--spread-bps BPS] [--permissions area,area]',
    run: async (flags) => {
      const platform = await createPlatform(required(flags, 'name'), flags['spread-bps'] ?? '0');
      const credentials = await createApiKey(platform.platform_code, parsePermissions(flags.permissions));
      return { platform_code: platform.platform_code, participant_code: platform.participant_code, ...credentials };
    },
  },
  'key create': {
    usage: 'key create --platform CODE [--permissions area,area]',
    run: async (flags) => {
      const platformCode = required(flags, 'platform');
      if (!(await getPlatform(platformCode))) throw new UsageError(`unknown platform ${platformCode}`);
      return { platform_code: platformCode, ...(await createApiKey(platformCode, parsePermissions(flags.permissions))) };
    },
  },
  'key revoke': {
    usage: 'key revoke --api-key KEY',
    run: async (flags) => {
      const apiKey = required(flags, 'api-key');
      await revokeApiKey(apiKey);
      return { api_key: apiKey, revoked: true };
    },
  },
  'key list': {
    usage: 'key list --platform CODE',
    run: async (flags) => ({ platform_code: required(flags, 'platform'), keys: await listApiKeys(required(flags, 'platform')) }),
  },
};
