import * as z from 'zod/mini';

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

const NOT_EMPTY = 'must be a non-empty string';

/** A non-empty string, refused with one message whatever is wrong (absent, another type, empty). */
export const nonEmptyString = () => z.string(NOT_EMPTY).check(z.minLength(1, NOT_EMPTY));

const MAX_MESSAGE_ID_CHARS = 100;

/**
 * An id of ours (a UUID) in a message from an outside system: a much longer one can't be one, and looking it
 * up would fail on DynamoDB's key size (a throw, so a retry of a message that can never succeed).
 */
export const messageId = () =>
  nonEmptyString().check(z.maxLength(MAX_MESSAGE_ID_CHARS, `at most ${MAX_MESSAGE_ID_CHARS} characters`));

/**
 * `schema` behind a step that reports what `problem` names as an ordinary issue, before `schema` sees the
 * value (any issue stops the pipe there). For `z.int()`: it answers a number with a fraction with an issue
 * that stops every later check of the body, the rules across fields included, so a field refuses a fraction
 * this way and its other problems still reach the client with everyone else's.
 */
export function refusedFirst<Out>(problem: (value: unknown) => string | undefined, schema: z.core.$ZodType<Out>) {
  const refuse = (value: unknown, payload: z.core.ParsePayload) => {
    const message = problem(value);
    if (message !== undefined) payload.issues.push({ code: 'custom', message, input: value });
    return value;
  };
  return z.pipe(z.transform(refuse), schema);
}
