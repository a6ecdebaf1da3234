/**
 * How many answers each of a context's lookup caches keeps (`ContextCaches.accountRefs`, `customerCodes`): a
 * warm container serves a bounded working set, so past this the oldest kept answer makes room.
 */
export const KEPT_LOOKUPS = 10_000;

/**
 * Keeps a lookup's answer that never changes once found (an account id's parts, a customer e-mail's code).
 * Only answers found are kept: an absence may end at any time.
 */
export function keepLookup<V>(kept: Map<string, V>, key: string, value: V): void {
  if (!kept.has(key) && kept.size >= KEPT_LOOKUPS) {
    const oldest = kept.keys().next();
    if (!oldest.done) kept.delete(oldest.value);
  }
  kept.set(key, value);
}
