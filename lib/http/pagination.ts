/** One page of an already filtered, ordered list, in the list envelope of design section 3. */
export function paginate<T>(items: readonly T[], page: number, pageSize: number) {
  const count = items.length;
  const totalPages = Math.max(1, Math.ceil(count / pageSize));
  const start = (page - 1) * pageSize;
  return {
    message: items.slice(start, start + pageSize),
    page,
    page_size: pageSize,
    total_pages: totalPages,
    count,
  };
}
