import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';
import { accountLabel, printableText } from '../domain/validation.js';

// zod/mini keeps each Lambda bundle small (the classic API alone is ~450 KB minified); it ships without
// messages, so the English ones are registered once here, which every handler loads.
// Modules import `* as z from 'zod/mini'` themselves: re-exporting the namespace would defeat tree-shaking.
z.config(en());

/**
 * A required non-empty string (trimmed length ≥ 1) of at most `max` characters, free of control and invisible
 * formatting characters (`isPrintableText`).
 */
export const text = (max = 200) =>
  z
    .string()
    .check(
      z.trim(),
      z.minLength(1, 'must not be empty'),
      z.maxLength(max, `must be at most ${max} characters`),
      printableText(),
    );

/** Free text a client may leave out or clear (a description): bounded, free of control characters. */
export const optionalFreeText = (max: number) =>
  z.optional(z.nullable(z.string().check(z.maxLength(max, `must be at most ${max} characters`), printableText())));

/**
 * An account label, in a body or as a query filter: 1 to 50 letters, digits, `_` or `-`, as account groups
 * (`lib/domain/validation.ts`). Never trimmed: `general ` is refused, not read as `general`.
 */
export const accountLabelField = () => z.optional(accountLabel());

/**
 * A page number or size from the query string: digits only (so `1e2`, `0x10`, ` 5` and `5.0` are refused,
 * which a numeric coercion would accept), at least 1 and at most `max`; `fallback` when absent.
 */
export function pageNumber(fallback: number, max = 1_000_000) {
  return z
    ._default(
      z.pipe(
        z.pipe(z.string().check(z.regex(/^\d{1,9}$/, 'must be a whole number')), z.transform(Number)),
        z.number().check(z.minimum(1, 'must be 1 or more'), z.maximum(max, `must be at most ${max}`)),
      ),
      fallback,
      // The API description shows the string the query carries; its bounds and default are said here.
    )
    .check(
      z.meta({ description: `A whole number from 1 to ${max}; ${fallback} when absent.`, default: String(fallback) }),
    );
}

/** An opaque `cursor` as issued in `next_cursor`; its meaning is checked by the list (lib/store/table/paging.ts). */
export const cursorParameter = () =>
  z.optional(
    z.string().check(z.minLength(1, 'must not be empty'), z.maxLength(2048, 'is not a cursor this service issued')),
  );

/**
 * Pagination: pages from 1, `page_size` defaults to and is capped at `max`, and
 * `cursor` (from a previous page's `next_cursor`) instead of a page number to go on from where it ended.
 */
export const pageQuery = (max = 100) => ({
  page: pageNumber(1),
  page_size: pageNumber(max, max),
  cursor: cursorParameter(),
});

/** An amount as the client wrote it (checked against its asset by the use case): a string of bounded length. */
export const amountText = () => z.string().check(z.maxLength(60, 'must be at most 60 characters'));

/** An optional query-string filter of bounded length. */
export const queryFilter = (max = 100) =>
  z.optional(z.string().check(z.maxLength(max, `must be at most ${max} characters`)));
