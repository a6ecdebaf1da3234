import { itemVersions } from './item-versions.js';
import { movementAccountEntries } from './movement-account-entries.js';
import { tradeListEntries } from './trade-list-entries.js';
import type { Migration } from './run.js';

/**
 * Every migration, in version order (docs/operations.md, "Migrations"). A name is never reused; a migration, once
 * shipped, is never changed (its record says it ran).
 */
export const MIGRATIONS: readonly Migration[] = [movementAccountEntries, itemVersions, tradeListEntries];

export function findMigration(name: string): Migration | undefined {
  return MIGRATIONS.find((migration) => migration.name === name);
}

export { runMigration } from './run.js';
export {
  ConcurrentMigrationRunError,
  migrationRuns,
  type MigrationRun,
} from './records.js';
export { ITEM_VERSIONS, MOVEMENT_ACCOUNT_ENTRIES, TRADE_LIST_ENTRIES } from './names.js';
