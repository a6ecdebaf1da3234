import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { ValidationError } from '../../domain/errors.js';
import { withRetry } from './retry.js';
import type { AppContext } from '../../context.js';
import { openCursor, sealCursor } from '../../crypto/list-cursor.js';

/**
 * Cursor paging for every list of the API. A page is one key-ordered Query of one
 * page on an index whose partition is the platform's list (plus its common filter), so what a page costs
 * does not depend on how many records the platform holds. The API reference for building a new list on it
 * is in `lib/store/README.md` ("Lists").
 */

/** A list's index partition and order. Built by the store module that owns the list's keys. */
export interface ListIndex {
  /** The GSI to query, or undefined for the table itself. */
  indexName?: string;
  /** Index partition key attribute and the value that selects the platform's list. */
  partition: { attribute: string; value: string };
  /** Index sort key attribute: the list's order. */
  sortAttribute: string;
  /** Optional sort-key range: both ends inclusive, or a prefix (a filter that is part of the key). */
  sortRange?: { between: [string, string] } | { beginsWith: string };
  /** True: descending sort key (newest first). */
  descending: boolean;
  /**
   * Filters with no index of their own, narrowing the read as a FilterExpression. Attribute names and values
   * are the caller's (placeholders `#...`, `:...`); they must not collide with `#pk`, `#sk`, `:pk`, `:from`,
   * `:to`, `:prefix`.
   */
  filter?: { expression: string; names?: Record<string, string>; values?: Record<string, unknown> };
}

/** What the list was asked for: the position (page number or cursor) and the page size. */
export interface PageRequest {
  page: number;
  pageSize: number;
  cursor?: string;
}

/**
 * What a cursor is bound to: the list, the platform and every filter of the request (page and size excluded).
 * A cursor presented with any other binding is refused, so it can't be replayed against another platform or
 * another filter.
 */
export interface ListBinding {
  list: string;
  platformCode: string;
  filters: Record<string, string | number | boolean | undefined>;
}

interface Page {
  /** The page's items as stored, in the list's order. */
  items: Record<string, unknown>[];
  /** The page number this page is (from the request, or carried by the cursor). */
  page: number;
  /** Opaque; null when nothing follows. */
  nextCursor: string | null;
}

/**
 * The most items a filtered page may evaluate before it answers. A filter without an index of its own can
 * need many records read per match; past this it answers with what it found and a `next_cursor`.
 */
export const PAGE_READ_BUDGET = 1_000;

/** `page=N` reaches this many records at most (page x page_size); deeper is reached with `cursor`. */
const PAGE_WINDOW = 10_000;

const CURSOR_PROBLEM =
  'cursor: not a cursor this list issued for this platform and these filters; start again without cursor';

// ---- cursor ------------------------------------------------------------------------------------------

/** The binding as one canonical string: filters sorted by name, absent ones left out. */
function bindingText(binding: ListBinding, partition: string): string {
  const filters = Object.entries(binding.filters)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => [name, String(value)])
    .sort(([a], [b]) => (a! < b! ? -1 : a! > b! ? 1 : 0));
  return JSON.stringify(['v1', binding.list, binding.platformCode, partition, filters]);
}

interface CursorPayload {
  /** The page number the cursor leads to. */
  n: number;
  /** The start key, without the partition attribute (the binding supplies it). */
  k: Record<string, string>;
}

function encodeCursor(
  ctx: Pick<AppContext, 'cursorKey'>,
  payload: CursorPayload,
  binding: ListBinding,
  index: ListIndex,
): Promise<string> {
  return sealCursor(ctx, JSON.stringify(payload), bindingText(binding, index.partition.value));
}

/** The start key and page number of a cursor this list issued for this binding; anything else is a 400. */
async function decodeCursor(
  ctx: Pick<AppContext, 'cursorKey'>,
  cursor: string,
  binding: ListBinding,
  index: ListIndex,
  keyAttributes: readonly string[],
): Promise<{ startKey: Record<string, string>; page: number }> {
  const refuse = () => new ValidationError([CURSOR_PROBLEM]);
  const text = await openCursor(ctx, cursor, bindingText(binding, index.partition.value));
  if (text === undefined) throw refuse();
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch {
    throw refuse();
  }
  const { n, k } = (payload ?? {}) as Partial<CursorPayload>;
  const wanted = keyAttributes.filter((name) => name !== index.partition.attribute);
  if (!Number.isSafeInteger(n) || (n as number) < 2 || !k || typeof k !== 'object') throw refuse();
  if (Object.keys(k).length !== wanted.length || !wanted.every((name) => typeof k[name] === 'string')) throw refuse();
  return { startKey: { ...k, [index.partition.attribute]: index.partition.value }, page: n as number };
}

// ---- filters -----------------------------------------------------------------------------------------

export type ListFilter = NonNullable<ListIndex['filter']>;

/** `attribute = value` for every given field (undefined ones left out); undefined when none is given. */
export function equalityFilter(fields: Record<string, string | number | boolean | undefined>): ListFilter | undefined {
  const given = Object.entries(fields).filter(([, value]) => value !== undefined);
  if (given.length === 0) return undefined;
  return {
    expression: given.map((_, i) => `#eq${i} = :eq${i}`).join(' AND '),
    names: Object.fromEntries(given.map(([name], i) => [`#eq${i}`, name])),
    values: Object.fromEntries(given.map(([, value], i) => [`:eq${i}`, value])),
  };
}

/** All of the given filters (AND); undefined when none is given. Placeholders must not collide. */
export function combineFilters(filters: readonly (ListFilter | undefined)[]): ListFilter | undefined {
  const given = filters.filter((filter): filter is ListFilter => filter !== undefined);
  if (given.length === 0) return undefined;
  // DynamoDB refuses redundant parentheses, so a lone filter goes as it is.
  if (given.length === 1) return given[0];
  return {
    expression: given.map((filter) => `(${filter.expression})`).join(' AND '),
    names: Object.assign({}, ...given.map((filter) => filter.names)),
    values: Object.assign({}, ...given.map((filter) => filter.values)),
  };
}

// ---- query -------------------------------------------------------------------------------------------

function keyOf(item: Record<string, unknown>, keyAttributes: readonly string[]): Record<string, string> {
  return Object.fromEntries(keyAttributes.map((name) => [name, String(item[name])]));
}

function queryInput(ctx: Pick<AppContext, 'tables'>, index: ListIndex): QueryCommandInput {
  const names: Record<string, string> = { '#pk': index.partition.attribute, ...index.filter?.names };
  const values: Record<string, unknown> = { ':pk': index.partition.value, ...index.filter?.values };
  let condition = '#pk = :pk';
  if (index.sortRange) {
    names['#sk'] = index.sortAttribute;
    if ('between' in index.sortRange) {
      condition += ' AND #sk BETWEEN :from AND :to';
      values[':from'] = index.sortRange.between[0];
      values[':to'] = index.sortRange.between[1];
    } else {
      condition += ' AND begins_with(#sk, :prefix)';
      values[':prefix'] = index.sortRange.beginsWith;
    }
  }
  return {
    TableName: ctx.tables.main,
    ...(index.indexName && { IndexName: index.indexName }),
    KeyConditionExpression: condition,
    ...(index.filter && { FilterExpression: index.filter.expression }),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
    ScanIndexForward: !index.descending,
  };
}

/** The attributes that make up a start key on this index: the table's keys and the index's. */
function startKeyAttributes(index: ListIndex): string[] {
  const attributes = ['pk', 'sk'];
  if (index.indexName) attributes.push(index.partition.attribute, index.sortAttribute);
  return attributes;
}

/**
 * `page=N`: the start key after the first (N-1) x size matching records, read as keys only. Bounded by the
 * window (and, for a filtered list, by the records the window may evaluate); undefined when the list ends
 * before. Page 1 starts at the beginning.
 */
async function skipTo(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  index: ListIndex,
  request: PageRequest,
  keyAttributes: readonly string[],
): Promise<{ startKey?: Record<string, string>; ended: boolean }> {
  const skip = (request.page - 1) * request.pageSize;
  if (skip === 0) return { ended: false };
  const base = queryInput(ctx, index);
  const projectionNames = Object.fromEntries(keyAttributes.map((name, i) => [`#key${i}`, name]));
  let skipped = 0;
  let evaluated = 0;
  let startKey: Record<string, unknown> | undefined;
  for (;;) {
    const out = await withRetry(ctx, { what: 'list read' }, () =>
      ctx.db.send(
        new QueryCommand({
          ...base,
          ExpressionAttributeNames: { ...base.ExpressionAttributeNames, ...projectionNames },
          ProjectionExpression: Object.keys(projectionNames).join(', '),
          Limit: index.filter ? PAGE_WINDOW - evaluated : skip - skipped,
          ExclusiveStartKey: startKey,
        }),
      ),
    );
    evaluated += out.ScannedCount ?? 0;
    const items = out.Items ?? [];
    if (skipped + items.length >= skip)
      return { startKey: keyOf(items[skip - skipped - 1]!, keyAttributes), ended: false };
    skipped += items.length;
    if (!out.LastEvaluatedKey) return { ended: true };
    if (evaluated >= PAGE_WINDOW) throw new ValidationError([windowProblem()]);
    startKey = out.LastEvaluatedKey;
  }
}

function windowProblem(): string {
  return `page: page x page_size must be at most ${PAGE_WINDOW} records (a filtered list: within its first ${PAGE_WINDOW} records); go further with cursor, passing each page's next_cursor`;
}

/**
 * One page of a list. Unfiltered: one Query of page_size + 1 items (the extra one only tells whether a next
 * page exists). Filtered without an index: Queries evaluating at most PAGE_READ_BUDGET records; a page that
 * runs out of budget comes back short, with a cursor where the read stopped.
 */
async function queryPage(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'config' | 'caches' | 'retry' | 'cursorKey'>,
  index: ListIndex,
  request: PageRequest,
  binding: ListBinding,
): Promise<Page> {
  const keyAttributes = startKeyAttributes(index);
  let startKey: Record<string, unknown> | undefined;
  let page = request.page;
  if (request.cursor !== undefined) {
    ({ startKey, page } = await decodeCursor(ctx, request.cursor, binding, index, keyAttributes));
  } else {
    if (request.page * request.pageSize > PAGE_WINDOW) throw new ValidationError([windowProblem()]);
    const skipped = await skipTo(ctx, index, request, keyAttributes);
    if (skipped.ended) return { items: [], page, nextCursor: null };
    startKey = skipped.startKey;
  }

  const base = queryInput(ctx, index);
  const items: Record<string, unknown>[] = [];
  let evaluated = 0;
  for (;;) {
    const wanted = request.pageSize + 1 - items.length;
    const out = await withRetry(ctx, { what: 'list read' }, () =>
      ctx.db.send(
        new QueryCommand({
          ...base,
          // Filtered reads ask for more than they need: matches may be sparse, and the budget bounds the cost.
          Limit: index.filter ? Math.min(PAGE_READ_BUDGET - evaluated, Math.max(wanted, 100)) : wanted,
          ExclusiveStartKey: startKey,
        }),
      ),
    );
    evaluated += out.ScannedCount ?? 0;
    items.push(...(out.Items ?? []));
    if (items.length > request.pageSize) {
      const shown = items.slice(0, request.pageSize);
      return {
        items: shown,
        page,
        nextCursor: await encodeCursor(
          ctx,
          { n: page + 1, k: cursorStart(shown.at(-1)!, keyAttributes, index) },
          binding,
          index,
        ),
      };
    }
    if (!out.LastEvaluatedKey) return { items, page, nextCursor: null };
    startKey = out.LastEvaluatedKey;
    if (evaluated >= PAGE_READ_BUDGET || !index.filter) {
      // Out of budget (or, unfiltered, cut by DynamoDB's 1 MB page): answer short, continue where it stopped.
      return {
        items,
        page,
        nextCursor: await encodeCursor(
          ctx,
          { n: page + 1, k: cursorStart(startKey, keyAttributes, index) },
          binding,
          index,
        ),
      };
    }
  }
}

function cursorStart(
  item: Record<string, unknown>,
  keyAttributes: readonly string[],
  index: ListIndex,
): Record<string, string> {
  const key = keyOf(item, keyAttributes);
  delete key[index.partition.attribute];
  return key;
}

/**
 * How many records a list without a stored counter holds: a COUNT Query over its key range and filter
 * (only counts leave DynamoDB) that evaluates at most `LIST_COUNT_BUDGET` records. Past that it answers null
 * (unknown): a filter combination with no counter never costs more than the budget, however long the
 * platform's history.
 */
async function boundedCount(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry' | 'config'>,
  index: ListIndex,
): Promise<number | null> {
  const budget = ctx.config.LIST_COUNT_BUDGET;
  const base = queryInput(ctx, index);
  let count = 0;
  let evaluated = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    if (evaluated >= budget) return null;
    const out = await withRetry(ctx, { what: 'list count' }, () =>
      ctx.db.send(
        new QueryCommand({ ...base, Select: 'COUNT', Limit: budget - evaluated, ExclusiveStartKey: startKey }),
      ),
    );
    count += out.Count ?? 0;
    evaluated += out.ScannedCount ?? 0;
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  return count;
}

/**
 * A page and the list's count, read in parallel: from the list's counter when the request's filters have
 * one (`counter`), else `boundedCount`.
 */
export async function pageWithCount(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'config' | 'caches' | 'retry' | 'cursorKey'>,
  index: ListIndex,
  request: PageRequest,
  binding: ListBinding,
  counter?: () => Promise<number>,
): Promise<Page & { count: number | null }> {
  const [page, count] = await Promise.all([
    queryPage(ctx, index, request, binding),
    counter ? counter() : boundedCount(ctx, index),
  ]);
  return { ...page, count };
}

/**
 * A page and the list's count, for a list without a counter that is usually one page (an endpoint's delivery
 * attempts): a first page read to the list's end is the whole list and counts it, so such a list costs one
 * Query; a longer list (or a later page) is counted by `boundedCount` after its page.
 */
export async function pageCountedWhenWhole(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'config' | 'caches' | 'retry' | 'cursorKey'>,
  index: ListIndex,
  request: PageRequest,
  binding: ListBinding,
): Promise<Page & { count: number | null }> {
  const page = await queryPage(ctx, index, request, binding);
  const whole = request.page === 1 && request.cursor === undefined && page.nextCursor === null;
  return { ...page, count: whole ? page.items.length : await boundedCount(ctx, index) };
}
