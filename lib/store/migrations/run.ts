import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import {
  getMigrationRun,
  saveMigrationProgress,
  startMigrationRun,
  type MigrationProgress,
  type MigrationRun,
} from './records.js';
import type { AppContext } from '../../context.js';

/** Items of a page migrated at once. */
const PAGE_CONCURRENCY = 8;
/** Items a page reads (evaluated, before any filter): bounds a page's memory and time. */
export const PAGE_ITEMS = 100;

/**
 * One page of a Scan of the main table for the items a migration has still to do: those of `types` without the
 * attribute `missing`, and with `platformCode`, those carrying that `platform_code` (items that carry none are
 * reached by the whole-table run only). `PAGE_ITEMS` evaluated a page, from `position`.
 */
export function scanUndone(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  filter: { types: readonly string[]; missing: string; platformCode: string | undefined },
  position: Record<string, unknown> | undefined,
) {
  const typeValues = Object.fromEntries(filter.types.map((type, i) => [`:t${i}`, type]));
  return ctx.db.send(
    new ScanCommand({
      TableName: ctx.tables.main,
      Limit: PAGE_ITEMS,
      FilterExpression: [
        `attribute_not_exists(${filter.missing})`,
        `#type IN (${Object.keys(typeValues).join(', ')})`,
        ...(filter.platformCode === undefined ? [] : ['platform_code = :platform']),
      ].join(' AND '),
      ExpressionAttributeNames: { '#type': 'type' },
      ExpressionAttributeValues: {
        ...typeValues,
        ...(filter.platformCode !== undefined && { ':platform': filter.platformCode }),
      },
      ExclusiveStartKey: position,
    }),
  );
}

/** What migrating one item came to: migrated, found done already, or left alone. */
export type ItemOutcome = 'migrated' | 'already' | 'skipped';

/**
 * Runs `migrate` on every item of a page, `PAGE_CONCURRENCY` at a time (a migration's page, in any order), and
 * counts them in `progress`: each item read, each outcome, and the items written (one per item migrated, unless
 * `migrate` says how many).
 */
export async function migrateEach<T>(
  items: readonly T[],
  progress: MigrationProgress,
  migrate: (item: T) => Promise<ItemOutcome | { result: ItemOutcome; written: number }>,
): Promise<void> {
  progress.read += items.length;
  const queue = [...items];
  await Promise.all(
    Array.from({ length: PAGE_CONCURRENCY }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
        const done = await migrate(item);
        const { result, written } =
          typeof done === 'string' ? { result: done, written: done === 'migrated' ? 1 : 0 } : done;
        progress[result] += 1;
        progress.written += written;
      }
    }),
  );
}

/**
 * A versioned, named backfill. `page` does one bounded page of work from `position` (undefined: the start)
 * and returns where the next page starts (undefined: done); every write it makes is conditional, so a page
 * done twice (a run interrupted after the write, before saving its position) or alongside live bookings
 * changes nothing twice. Memory is one page.
 */
export interface Migration {
  /** `<version>-<what>`: the version orders migrations. */
  name: string;
  description: string;
  page(
    ctx: AppContext,
    scope: { platformCode?: string },
    position: Record<string, unknown> | undefined,
    progress: MigrationProgress,
  ): Promise<Record<string, unknown> | undefined>;
}

interface MigrationOutcome {
  name: string;
  scope: string;
  /** `applied` by this run, `already applied` (a no-op), or `stopped` (the signal fired; run again to continue). */
  outcome: 'applied' | 'already applied' | 'stopped';
  progress: MigrationProgress;
  run: MigrationRun;
}

/**
 * Runs (or continues) `migration` over the whole table or one platform: page after page, saving the
 * progress and position after each, until done or `signal` aborts (it stops after the page in hand).
 */
export async function runMigration(
  ctx: AppContext,
  migration: Migration,
  options: {
    platformCode?: string;
    operator: string;
    reason: string;
    signal?: AbortSignal;
    onProgress?: (progress: MigrationProgress) => void;
  },
): Promise<MigrationOutcome> {
  const { platformCode } = options;
  const started = await startMigrationRun(ctx, migration.name, platformCode, options);
  const scope = started.scope;
  if (started.status === 'applied')
    return { name: migration.name, scope, outcome: 'already applied', progress: started.progress, run: started };
  const progress = { ...started.progress };
  let position: Record<string, unknown> | undefined = started.position ?? undefined;
  for (;;) {
    if (options.signal?.aborted) {
      const run = (await getMigrationRun(ctx, migration.name, platformCode)) ?? started;
      return { name: migration.name, scope, outcome: 'stopped', progress, run };
    }
    position = await migration.page(ctx, { platformCode }, position, progress);
    const previousPages = progress.pages;
    progress.pages += 1;
    const saved = await saveMigrationProgress(
      ctx,
      migration.name,
      platformCode,
      previousPages,
      progress,
      position ?? null,
    );
    options.onProgress?.({ ...progress });
    if (!saved) {
      // Another run finished it meanwhile.
      const run = (await getMigrationRun(ctx, migration.name, platformCode)) ?? started;
      return { name: migration.name, scope, outcome: 'already applied', progress: run.progress, run };
    }
    if (position === undefined) break;
  }
  const run = (await getMigrationRun(ctx, migration.name, platformCode)) ?? started;
  return { name: migration.name, scope, outcome: 'applied', progress, run };
}
