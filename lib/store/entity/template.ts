/**
 * Key templates: how an entity spells a key or index attribute from its parts, e.g. `TRADE#{trade_id}` or
 * `{created_ms:time}#{trade_id}`. A part is `{name}` (its value as text) or `{name:format}`: `time` pads an
 * epoch-millisecond integer to 15 digits, and a number N pads an integer to N digits, so that a key sorts as
 * its number does. The same template builds the key, its prefix for a range read, and the store chart.
 */

/** The part names a template mentions, as a union of string literals (for the parts' types). */
export type PartNames<T extends string> = T extends `${string}{${infer Part}}${infer Rest}`
  ? (Part extends `${infer Name}:${string}` ? Name : Part) | PartNames<Rest>
  : never;

/** The values a template needs. */
export type PartsOf<T extends string> = { readonly [K in PartNames<T>]: string | number };

type Segment = { text: string } | { part: string; format?: string };

export interface CompiledTemplate {
  readonly source: string;
  readonly parts: readonly string[];
  /** The key, every part given (an absent one is an error naming the template). */
  build(values: Readonly<Record<string, unknown>>): string;
  /** The key up to the first part not given: a prefix for `begins_with` over the parts given. */
  prefix(values: Readonly<Record<string, unknown>>): string;
  /** Whether every part the template needs is given (not undefined or null). */
  complete(values: Readonly<Record<string, unknown>>): boolean;
}

const PART = /\{([a-z_][a-z0-9_]*)(?::([a-z0-9]+))?\}/gi;

function segmentsOf(source: string): Segment[] {
  const segments: Segment[] = [];
  let at = 0;
  for (const match of source.matchAll(PART)) {
    if (match.index > at) segments.push({ text: source.slice(at, match.index) });
    segments.push({ part: match[1]!, ...(match[2] !== undefined && { format: match[2] }) });
    at = match.index + match[0].length;
  }
  if (at < source.length) segments.push({ text: source.slice(at) });
  return segments;
}

/** A part's value as it appears in a key. */
function formatted(template: string, part: string, format: string | undefined, value: unknown): string {
  if (format === undefined) {
    if (typeof value !== 'string' && typeof value !== 'number')
      throw new Error(`key template ${template}: part ${part} is not text or a number`);
    return String(value);
  }
  const width = format === 'time' ? 15 : Number(format);
  if (!Number.isSafeInteger(width)) throw new Error(`key template ${template}: unknown format ${format}`);
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw new Error(`key template ${template}: part ${part} must be a whole number, got ${String(value)}`);
  return String(value).padStart(width, '0');
}

export function compileTemplate(source: string): CompiledTemplate {
  const segments = segmentsOf(source);
  const parts = segments.flatMap((segment) => ('part' in segment ? [segment.part] : []));
  const given = (values: Readonly<Record<string, unknown>>, part: string) =>
    values[part] !== undefined && values[part] !== null;
  return {
    source,
    parts,
    build(values) {
      return segments
        .map((segment) => {
          if ('text' in segment) return segment.text;
          if (!given(values, segment.part)) throw new Error(`key template ${source}: no value for ${segment.part}`);
          return formatted(source, segment.part, segment.format, values[segment.part]);
        })
        .join('');
    },
    prefix(values) {
      let text = '';
      for (const segment of segments) {
        if ('text' in segment) text += segment.text;
        else if (given(values, segment.part))
          text += formatted(source, segment.part, segment.format, values[segment.part]);
        else break;
      }
      return text;
    },
    complete(values) {
      return parts.every((part) => given(values, part));
    },
  };
}

/**
 * The template as the store chart shows it: `TRADE#<trade_id>`. Apart from `compileTemplate`, so the functions'
 * bundles, which never draw the chart, leave it out.
 */
export function templateChart(source: string): string {
  return segmentsOf(source)
    .map((segment) => ('text' in segment ? segment.text : `<${segment.part}>`))
    .join('');
}
