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

/**
 * Account labels follow the rule of account groups: 1 to 50 letters, digits, `_` and `-`, kept as given and
 * compared as stored (`General` and `general` are two labels). Nothing else: `#` separates an account's key
 * parts, and a space, a dot or a slash would make a label that only looks like another.
 */
export const ACCOUNT_LABEL_MAX_LENGTH = 50;
export const ACCOUNT_LABEL_PATTERN = /^[A-Za-z0-9_-]{1,50}$/;
export const ACCOUNT_LABEL_RULE = 'must be 1 to 50 letters, digits, _ or - (an account label)';

/** Why `label` can't name an account label, or undefined when it can. */
export function accountLabelProblem(field: string, label: string): string | undefined {
  return ACCOUNT_LABEL_PATTERN.test(label) ? undefined : `${field}: ${ACCOUNT_LABEL_RULE}`;
}

/** An account label in a body or a query (see `accountLabelProblem`), never trimmed or folded. */
export const accountLabel = () => z.string().check(z.regex(ACCOUNT_LABEL_PATTERN, ACCOUNT_LABEL_RULE));

/**
 * Characters free text must not hold: C0 and C1 controls (NUL, escape, line breaks and tabs included) and
 * DEL; the invisible formatting characters that make text read other than it is stored (the bidirectional
 * embeddings, overrides and isolates U+202A-202E and U+2066-2069, the marks U+200E/U+200F/U+061C, zero-width
 * characters U+200B-200D and U+2060, the byte-order mark U+FEFF); line and paragraph separators
 * U+2028/U+2029; and lone surrogates (not text at all).
 */
const FORBIDDEN_IN_TEXT =
  /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060\u2066-\u2069\ufeff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export const CONTROL_CHARACTER_MESSAGE = 'must not contain control or invisible formatting characters';

/** Whether `value` is free of the characters free text must not hold (`FORBIDDEN_IN_TEXT`). */
export function isPrintableText(value: string): boolean {
  return !FORBIDDEN_IN_TEXT.test(value);
}

/** The check every free-text field carries: a name, an address, a description. */
export const printableText = () => z.refine<string>(isPrintableText, CONTROL_CHARACTER_MESSAGE);
