import { z } from 'zod';
import { AMOUNT_PATTERN } from '../domain/money.js';

/** `field.path: message` for every issue, so a client sees all its mistakes at once. */
export function formatIssues(issues: readonly z.core.$ZodIssue[], root: string): string[] {
  return issues.map((issue) => {
    const path = issue.path.length ? issue.path.map((part, i) => (typeof part === 'number' ? `[${part}]` : `${i ? '.' : ''}${String(part)}`)).join('') : root;
    return `${path}: ${issue.message}`;
  });
}

/** A decimal amount on the wire: a string of digits with an optional point; the asset's precision is checked later. */
export const decimalString = z.string().regex(AMOUNT_PATTERN, 'must be a decimal string such as "12.34" (no sign, no exponent)');

/** Pagination per design section 3: pages from 1, default and maximum size `max`. */
export function pageQuery(sizeField: 'page_size' | 'size', max: number) {
  return {
    page: z.coerce.number().int('must be a whole number').min(1, 'must be 1 or more').default(1),
    [sizeField]: z.coerce.number().int('must be a whole number').min(1, 'must be 1 or more').max(max, `must be at most ${max}`).default(max),
  } as { page: z.ZodDefault<z.ZodCoercedNumber>; } & Record<typeof sizeField, z.ZodDefault<z.ZodCoercedNumber>>;
}
