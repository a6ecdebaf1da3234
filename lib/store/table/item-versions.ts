import { readInteger } from './integers.js';

/**
 * Item schema versions (lib/store/README.md, "Item versions"). An entity whose items changed shape keeps its
 * current version in `item_version`, stamped by every write that leaves the item complete in that shape, so
 * a reader branches on the version instead of on which attributes happen to be absent. An item without
 * `item_version` was written before its entity carried one: version 1, the legacy shape, where attributes
 * that later became guaranteed may be absent. A migration (lib/store/migrations/) writes them explicitly and
 * stamps the version; once it has run everywhere the legacy defaults can go.
 */

export function itemVersionOf(item: Record<string, unknown>): number {
  return item.item_version === undefined ? 1 : readInteger(item.item_version);
}

/**
 * An integer attribute every item of version `since` or later carries. An older item may lack it: it reads
 * `legacy`, what that version meant by its absence. A newer one without it is broken (a writer stamped a version
 * it did not complete): an error, never a default.
 */
export function integerSince(item: Record<string, unknown>, attribute: string, since: number, legacy: number): number {
  const value = item[attribute];
  if (value !== undefined) return readInteger(value);
  const version = itemVersionOf(item);
  if (version < since) return legacy;
  throw new Error(`no ${attribute} in ${item.pk} at item_version ${version}`);
}
