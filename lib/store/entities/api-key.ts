import * as z from 'zod/mini';
import { PERMISSION_AREAS } from '../../domain/caller.js';
import { integer } from '../entity/attributes.js';
import { defineEntity } from '../entity/entity.js';
import { rateLimitAttribute } from './platform.js';

const apiKeySchema = z.object({
  api_key: z.string(),
  platform_code: z.string(),
  /** The areas the key may call (at least one; `lib/routes.ts` names each route's). */
  permissions: z.array(z.enum(PERMISSION_AREAS)),
  /** The secret, encrypted (lib/crypto/secret-cipher.ts). */
  secret_ciphertext: z.string(),
  /** The passphrase only as a salted SHA-256 (base64 both). */
  passphrase_salt: z.string(),
  passphrase_hash: z.string(),
  created_at: integer,
  /** Set once, when the key is revoked. */
  revoked_at: z.optional(integer),
  /** Its platform's rate limit, copied here so a request reads it with the key; absent: the default. */
  rate_limit: z.optional(rateLimitAttribute),
});

export type ApiKey = z.output<typeof apiKeySchema>;

/** An API key, read on every signed request; in its platform's list of keys. */
export const apiKeyEntity = defineEntity({
  type: 'api_key',
  table: 'main',
  schema: apiKeySchema,
  key: { pk: 'APIKEY#{api_key}', sk: 'APIKEY' },
  indexes: { gsi1: { pk: 'PLATFORM#{platform_code}#APIKEYS', sk: '{api_key}' } },
});
