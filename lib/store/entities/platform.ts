import * as z from 'zod/mini';
import { integer } from '../entity/attributes.js';
import { defineEntity } from '../entity/entity.js';

/**
 * A platform's rate limit as ops set it (`platform limits`): on the platform, and copied onto each of its API
 * keys, where the signature check finds it with the key it reads anyway. Absent: the configured default.
 */
export const rateLimitAttribute = z.object({ rps: integer, burst: integer });

const platformSchema = z.object({
  platform_code: z.string(),
  /** The platform's own participant (it holds the platform's accounts). Equal to the platform code. */
  participant_code: z.string(),
  name: z.string(),
  /** Spread applied to reference prices for this platform's quotes, in basis points (a decimal, as text). */
  spread_bps: z.string(),
  created_at: integer,
  rate_limit: z.optional(rateLimitAttribute),
});

export type Platform = z.output<typeof platformSchema>;

/** A platform: the tenant its API keys act for. Its partition also holds its relationships and webhook endpoints. */
export const platformEntity = defineEntity({
  type: 'platform',
  table: 'main',
  schema: platformSchema,
  key: { pk: 'PLATFORM#{platform_code}', sk: 'PLATFORM' },
});
