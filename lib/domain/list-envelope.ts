/**
 * The list envelope: the page under `message`, its position, the exact count (null, with
 * `total_pages`, only for a filter combination with no counter whose records exceed the count budget: see
 * lib/store/README.md "Lists"), and `next_cursor` (null on the last page).
 */
export function listEnvelope<T>(
  items: readonly T[],
  position: { page: number; pageSize: number; count: number | null; nextCursor: string | null },
) {
  return {
    message: items,
    page: position.page,
    page_size: position.pageSize,
    total_pages: position.count === null ? null : Math.max(1, Math.ceil(position.count / position.pageSize)),
    count: position.count,
    next_cursor: position.nextCursor,
  };
}
