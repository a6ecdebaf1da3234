import * as z from 'zod/mini';
import { integer } from '../entity/attributes.js';
import { defineEntity } from '../entity/entity.js';

// Apart from the platform (platform.ts), which every signed function imports for its API key's rate limit:
// a bundle keeps every definition of a module it imports, and only a few functions read relationships.

export const RELATIONSHIP_KINDS = ['submits_platform_transfers_for'] as const;
export type RelationshipKind = (typeof RELATIONSHIP_KINDS)[number];

/** A platform's standing permission to act for a participant of another platform (granted by ops). */
export const relationshipEntity = defineEntity({
  type: 'relationship',
  table: 'main',
  schema: z.object({
    kind: z.enum(RELATIONSHIP_KINDS),
    platform_code: z.string(),
    participant_code: z.string(),
    granted_at: integer,
  }),
  key: { pk: 'PLATFORM#{platform_code}', sk: 'RELATIONSHIP#{kind}#{participant_code}' },
});
