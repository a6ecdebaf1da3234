import * as z from 'zod/mini';
import { integer } from '../entity/attributes.js';
import { defineEntity } from '../entity/entity.js';

/** A count of a run's progress; one an older run did not record yet reads as 0. */
const count = z._default(integer, 0);

/**
 * A migration's run (lib/store/migrations): who started it and why, its progress and the position its paged
 * read reached (saved after each page, so an interrupted run continues there), and `status`: `running` until
 * the last page, then `applied` (a re-run is a no-op that says so).
 */
const migrationRunSchema = z.object({
  name: z.string(),
  /** `table`, or the platform's code. */
  scope: z.string(),
  status: z.enum(['running', 'applied']),
  operator: z.string(),
  reason: z.string(),
  started_at: integer,
  applied_at: z.optional(integer),
  updated_at: z.optional(integer),
  /** The last run's (a resumption's) operator, reason and start. */
  last_run: z.object({ operator: z.string(), reason: z.string(), at: integer }),
  /** What the runs have done so far, summed over their resumptions. */
  progress: z.object({
    /** Pages read. */
    pages: count,
    /** Items the paged read returned. */
    read: count,
    /** Items this migration changed something for. */
    migrated: count,
    /** Items written (e.g. account entries). */
    written: count,
    /** Items found done already (by a booking since the change, or by an earlier or concurrent run). */
    already: count,
    /** Items left alone because they can't be migrated (named in the log). */
    skipped: count,
  }),
  /** Where the paged read continues (its last evaluated key); absent at the start and once applied. */
  position: z.optional(z.record(z.string(), z.unknown())),
});

export type StoredMigrationRun = z.output<typeof migrationRunSchema>;

/** The run of a migration over the whole table (`scope` is `table`). */
export const tableMigrationRunEntity = defineEntity({
  type: 'migration',
  table: 'main',
  schema: migrationRunSchema,
  key: { pk: 'MIGRATION#{name}', sk: 'MIGRATION' },
});

/** The run of a migration over one platform's items (`scope` is the platform's code). */
export const platformMigrationRunEntity = defineEntity({
  type: 'migration',
  table: 'main',
  schema: migrationRunSchema,
  key: { pk: 'MIGRATION#{name}', sk: 'PLATFORM#{scope}' },
});
