import type * as z from 'zod/mini';

/**
 * `field.path: message` for every issue, so a client sees all its mistakes at once: the shape every 400 (and
 * every rejected bank or custody event) lists its problems in. Here rather than at the HTTP edge because
 * schemas of messages that do not arrive over HTTP report the same way.
 */
export function formatIssues(issues: readonly z.core.$ZodIssue[], root: string): string[] {
  return issues.map((issue) => {
    const path = issue.path.length
      ? issue.path
          .map((part, i) => (typeof part === 'number' ? `[${part}]` : `${i ? '.' : ''}${String(part)}`))
          .join('')
      : root;
    return `${path}: ${issue.message}`;
  });
}

/** A JSON object (not an array, not a class instance): what a request body or an event message must be. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
