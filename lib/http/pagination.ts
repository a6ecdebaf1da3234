/**
 * The list envelope of design section 3: the page under `message`, its position, the exact count from the
 * list's counter, and `next_cursor` (null on the last page).
 */
export function listEnvelope<T>(items: readonly T[], position: { page: number; pageSize: number; count: number; nextCursor: string | null }) {
  return {
    message: items,
    page: position.page,
    page_size: position.pageSize,
    total_pages: Math.max(1, Math.ceil(position.count / position.pageSize)),
    count: position.count,
    next_cursor: position.nextCursor,
  };
}
