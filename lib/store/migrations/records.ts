import { BatchGetCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { platformMigrationRunEntity, type StoredMigrationRun, tableMigrationRunEntity } from '../entities/migration.js';
import { queryAll } from '../table/query.js';
import type { AppContext } from '../../context.js';

/**
 * A migration's run, one item per scope in the partition `MIGRATION#<name>`: the whole table's (sk
 * `MIGRATION`) or one platform's (sk `PLATFORM#<code>`). It holds who started it and why, its progress and
 * the position its paged read reached (saved after each page, so an interrupted run continues there), and
 * `status`: `running` until the last page, then `applied` (a re-run is a no-op that says so).
 */

export type MigrationStatus = StoredMigrationRun['status'];

/** What a run has done so far, summed over its resumptions (lib/store/entities/migration.ts). */
export type MigrationProgress = StoredMigrationRun['progress'];

const NO_PROGRESS: MigrationProgress = { pages: 0, read: 0, migrated: 0, written: 0, already: 0, skipped: 0 };

/** A run as the runner and `migrate list` see it: `applied_at` and `position` null when absent. */
export interface MigrationRun extends Omit<StoredMigrationRun, 'applied_at' | 'updated_at' | 'position'> {
  applied_at: number | null;
  /** Where the paged read continues; null at the start and once applied. */
  position: Record<string, unknown> | null;
}

const TABLE_SCOPE = 'table';

/** The run's entity: the table's (sk `MIGRATION`) or a platform's (sk `PLATFORM#<code>`, its `scope`). */
const runEntity = (platformCode: string | undefined) =>
  platformCode === undefined ? tableMigrationRunEntity : platformMigrationRunEntity;

/** The key parts of the run of `name` for `platformCode` (none: the table's). */
const runParts = (name: string, platformCode: string | undefined) => ({ name, scope: platformCode ?? TABLE_SCOPE });

/** A run read back (the table's and a platform's share their schema). */
function runOf(item: Record<string, unknown>): MigrationRun {
  const { applied_at, updated_at: _updatedAt, position, ...run } = tableMigrationRunEntity.parse(item);
  return { ...run, applied_at: applied_at ?? null, position: position ?? null };
}

/** The run of `name` for the whole table (no platform) or one platform, read consistently. */
export async function getMigrationRun(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  name: string,
  platformCode?: string,
): Promise<MigrationRun | undefined> {
  const out = await ctx.db.send(
    new GetCommand(runEntity(platformCode).get(ctx.tables, runParts(name, platformCode), { consistent: true })),
  );
  return out.Item ? runOf(out.Item) : undefined;
}

/** Every run of `name` (the table's and each platform's). */
export async function migrationRuns(ctx: Pick<AppContext, 'db' | 'tables'>, name: string): Promise<MigrationRun[]> {
  const items = await queryAll(ctx, {
    ...tableMigrationRunEntity.query(ctx.tables, 'table', tableMigrationRunEntity.partitionKey({ name })),
    ConsistentRead: true,
  });
  return items.map(runOf);
}

/**
 * Starts a run, or continues one left `running` (recording who resumed it and why). Returns the run as
 * stored: an `applied` one is left as it is.
 */
export async function startMigrationRun(
  ctx: Pick<AppContext, 'clock' | 'db' | 'tables'>,
  name: string,
  platformCode: string | undefined,
  who: { operator: string; reason: string },
): Promise<MigrationRun> {
  const nowMs = ctx.clock.nowMs();
  const lastRun = { operator: who.operator, reason: who.reason, at: nowMs };
  try {
    await ctx.db.send(
      new PutCommand(
        runEntity(platformCode).put(
          ctx.tables,
          {
            name,
            scope: platformCode ?? TABLE_SCOPE,
            status: 'running',
            operator: who.operator,
            reason: who.reason,
            started_at: nowMs,
            last_run: lastRun,
            progress: NO_PROGRESS,
          },
          { condition: 'attribute_not_exists(pk)' },
        ).Put,
      ),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    try {
      await ctx.db.send(
        new UpdateCommand(
          runEntity(platformCode).update(ctx.tables, runParts(name, platformCode), {
            update: 'SET last_run = :lastRun',
            condition: '#status = :running',
            names: { '#status': 'status' },
            values: { ':lastRun': lastRun, ':running': 'running' },
          }).Update,
        ),
      );
    } catch (resumeError) {
      // Applied meanwhile (or before): the caller reads it and says so.
      if (!(resumeError instanceof ConditionalCheckFailedException)) throw resumeError;
    }
  }
  const run = await getMigrationRun(ctx, name, platformCode);
  if (!run) throw new Error(`migration ${name}: its run record vanished`);
  return run;
}

/** Another run of the same migration and scope saved a page meanwhile: two runs at once (harmless, but one is enough). */
export class ConcurrentMigrationRunError extends Error {
  override readonly name = 'ConcurrentMigrationRunError';
}

/**
 * Saves where a running run has got to; `position` null marks it applied. Conditioned on the run still
 * running with the pages this run last saw (`previousPages`): a run that another finished meanwhile does not
 * turn it back (it returns false), and of two runs at once the one that finds the other's page stops
 * (`ConcurrentMigrationRunError`; the pages both did are harmless, every write being conditional).
 */
export async function saveMigrationProgress(
  ctx: Pick<AppContext, 'clock' | 'db' | 'tables' | 'caches'>,
  name: string,
  platformCode: string | undefined,
  previousPages: number,
  progress: MigrationProgress,
  position: Record<string, unknown> | null,
): Promise<boolean> {
  const nowMs = ctx.clock.nowMs();
  const done = position === null;
  try {
    await ctx.db.send(
      new UpdateCommand(
        runEntity(platformCode).update(ctx.tables, runParts(name, platformCode), {
          update: done
            ? 'SET progress = :progress, updated_at = :now, #status = :applied, applied_at = :now REMOVE #position'
            : 'SET progress = :progress, updated_at = :now, #position = :position',
          condition: '#status = :running AND progress.pages = :previousPages',
          names: { '#status': 'status', '#position': 'position' },
          values: {
            ':progress': progress,
            ':now': nowMs,
            ':running': 'running',
            ':previousPages': previousPages,
            ...(done ? { ':applied': 'applied' } : { ':position': position }),
          },
        }).Update,
      ),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const stored = await getMigrationRun(ctx, name, platformCode);
    if (stored?.status === 'applied') return false;
    throw new ConcurrentMigrationRunError(
      `migration ${name} (${platformCode ?? 'table'}): another run saved its progress meanwhile; it carries on`,
    );
  }
  if (done)
    ctx.caches.migrations.set(cacheKey(name, platformCode), { applied: true, untilMs: Number.POSITIVE_INFINITY });
  return true;
}

/** How long a context believes a migration not applied before reading its record again. */
const MIGRATION_RECHECK_MS = 30_000;

const cacheKey = (name: string, platformCode: string | undefined) => `${name}#${platformCode ?? ''}`;

/**
 * Whether `name` has been applied to the whole table or to this platform: one consistent BatchGetItem of
 * the two records, kept for the context's life once applied, for `MIGRATION_RECHECK_MS` while not.
 */
export async function isMigrationApplied(
  ctx: Pick<AppContext, 'clock' | 'db' | 'tables' | 'caches'>,
  name: string,
  platformCode: string,
): Promise<boolean> {
  const nowMs = ctx.clock.nowMs();
  for (const scope of [undefined, platformCode]) {
    const cached = ctx.caches.migrations.get(cacheKey(name, scope));
    if (cached?.applied) return true;
  }
  const cached = ctx.caches.migrations.get(cacheKey(name, platformCode));
  if (cached && cached.untilMs > nowMs) return cached.applied;
  const out = await ctx.db.send(
    new BatchGetCommand({
      RequestItems: {
        [ctx.tables.main]: {
          Keys: [
            tableMigrationRunEntity.key(runParts(name, undefined)),
            platformMigrationRunEntity.key(runParts(name, platformCode)),
          ],
          ConsistentRead: true,
        },
      },
    }),
  );
  const found = out.Responses?.[ctx.tables.main] ?? [];
  // Unprocessed keys (throttling) read as not applied: the old path answers correctly, only slower.
  const applied = found.some((item) => runOf(item).status === 'applied');
  ctx.caches.migrations.set(cacheKey(name, platformCode), {
    applied,
    untilMs: applied ? Number.POSITIVE_INFINITY : nowMs + MIGRATION_RECHECK_MS,
  });
  return applied;
}
