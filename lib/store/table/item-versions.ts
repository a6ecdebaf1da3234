import { readInteger } from './integers.js';

/**
 * Item schema versions (lib/store/README.md, "Item versions"). An entity whose items changed shape keeps its
 * current version in `item_version`, stamped by every write that leaves the item complete in that shape, so
 * a reader branches on the version instead of on which attributes happen to be absent. An item without
 * `item_version` was written before its entity carried one: version 1, the legacy shape, where attributes
 * that later became guaranteed may be absent. A migration (lib/store/migrations/) writes them explicitly and
 * stamps the version; once it has run everywhere the legacy readers can go.
 */

/** The version of an item written before its entity carried `item_version`. */
const LEGACY_ITEM_VERSION = 1;

export function itemVersionOf(item: Record<string, unknown>): number {
  return item.item_version === undefined ? LEGACY_ITEM_VERSION : readInteger(item.item_version);
}

/**
 * An attribute the item's version guarantees. Its absence is a broken item (a writer stamped a version it did
 * not complete), said loudly rather than read as a default.
 */
export function guaranteed<T = unknown>(item: Record<string, unknown>, attribute: string): T {
  const value = item[attribute];
  if (value === undefined || value === null)
    throw new Error(
      `item ${String(item.pk)} / ${String(item.sk)}: item_version ${itemVersionOf(item)} without ${attribute}`,
    );
  return value as T;
}

/** An integer attribute the item's version guarantees (`guaranteed`). */
export function guaranteedInteger(item: Record<string, unknown>, attribute: string): number {
  return readInteger(guaranteed(item, attribute));
}
