import {
  findMigration,
  MIGRATIONS,
  migrationRuns,
  runMigration,
  type MigrationRun,
} from '../../lib/store/migrations/index.js';
import { getPlatform } from '../../lib/store/platforms.js';
import { optional, required, UsageError, withExitCode, type Commands } from './command.js';

const RUN_USAGE = 'migrate run NAME [--platform CODE]';

function runView(run: MigrationRun) {
  return {
    status: run.status,
    operator: run.operator,
    reason: run.reason,
    started_at: run.started_at,
    applied_at: run.applied_at,
    last_run: run.last_run,
    progress: run.progress,
  };
}

/**
 * Versioned backfills of stored items (docs/operations.md, "Migrations"): `migrate list` shows each and how far it got;
 * `migrate run NAME` runs one over the whole table (or, with --platform, that platform's items), resuming
 * where an interrupted run stopped. Ctrl-C stops after the page in hand (exit 3; run again to continue).
 */
export const migrationCommands: Commands = {
  'migrate list': {
    usage: 'migrate list',
    options: {},
    run: async (_flags, ctx) => ({
      migrations: await Promise.all(
        MIGRATIONS.map(async (migration) => {
          const runs = await migrationRuns(ctx, migration.name);
          const table = runs.find((run) => run.scope === 'table');
          return {
            name: migration.name,
            description: migration.description,
            applied: table?.status === 'applied',
            status: table?.status ?? 'not run',
            ...(table && { run: runView(table) }),
            platforms: runs
              .filter((run) => run.scope !== 'table')
              .map((run) => ({ platform_code: run.scope, ...runView(run) })),
          };
        }),
      ),
    }),
  },
  'migrate run': {
    usage: RUN_USAGE,
    options: { platform: { type: 'string' } },
    positional: 'name',
    mutates: true,
    check: (flags) => {
      const name = required(flags, 'name');
      if (!findMigration(name)) {
        throw new UsageError(
          `unknown migration '${name}' (known: ${MIGRATIONS.map((migration) => migration.name).join(', ')})\nusage: npm run admin -- ${RUN_USAGE} --reason TEXT`,
        );
      }
    },
    run: async (flags, ctx, audit) => {
      const migration = findMigration(required(flags, 'name'))!;
      const platformCode = optional(flags, 'platform');
      if (platformCode !== undefined && !(await getPlatform(ctx, platformCode))) {
        throw new UsageError(
          `--platform: no platform ${platformCode}\nusage: npm run admin -- ${RUN_USAGE} --reason TEXT`,
        );
      }
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        const outcome = await runMigration(ctx, migration, {
          platformCode,
          operator: audit.operator,
          reason: audit.reason,
          signal: stop.signal,
          onProgress: (progress) =>
            process.stderr.write(
              `${migration.name}${platformCode ? ` (${platformCode})` : ''}: ${JSON.stringify(progress)}\n`,
            ),
        });
        const result = {
          migration: outcome.name,
          scope: outcome.scope,
          outcome: outcome.outcome,
          progress: outcome.progress,
        };
        await audit.record(result);
        return withExitCode({ ...result, run: runView(outcome.run) }, outcome.outcome === 'stopped' ? 3 : 0);
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    },
  },
};
