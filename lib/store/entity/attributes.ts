import { NumberValue } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';

/**
 * Attribute codecs for entity schemas: what a stored attribute is in code (decoded on read) and how it is
 * written (encoded). Numbers come back from DynamoDB as `NumberValue` (the client reads with wrapNumbers), so
 * an integer or an exact decimal is never rounded through a JS number on its way in.
 */

/**
 * A text attribute. Entities share this one schema (and their other repeated ones) rather than call `z.string()`
 * per attribute: a schema holds no state of the attribute it checks, and zod builds an object graph per call,
 * which every function pays on its cold start for each entity it imports (docs/performance.md, "Import time").
 */
export const text = z.string();

/** What a DynamoDB number reads as: a NumberValue (wrapNumbers), or a number or text written by older code. */
const storedNumber = z.union([z.instanceof(NumberValue), z.number(), z.string()]);

function numberText(value: NumberValue | number | string): string {
  return value instanceof NumberValue ? value.value : String(value);
}

/** A safe integer (a time in ms, a counter, a version), stored as a DynamoDB number. */
export const integer = z.codec(storedNumber, z.number().check(z.int()), {
  decode: (value) => Number(numberText(value)),
  encode: (value) => value,
});

/** An exact decimal as text (a balance), stored as a DynamoDB number so it can be added to and compared. */
export const decimal = z.codec(storedNumber, z.string().check(z.regex(/^-?\d+(\.\d+)?$/, 'a decimal number')), {
  decode: (value) => numberText(value),
  encode: (text) => NumberValue.from(text),
});

/** An integer stored as text (a transfer's numeric id), so reading it back never depends on number handling. */
export const integerText = z.codec(z.string().check(z.regex(/^-?\d+$/, 'an integer')), z.number().check(z.int()), {
  decode: (text) => Number(text),
  encode: (value) => String(value),
});

/** A boolean; older items may lack it, which reads as false. */
export const flag = z._default(z.boolean(), false);

/** A ledger account named by its four parts (an account a record booked against), stored as a map. */
export const accountRef = z.object({
  participant_code: text,
  account_group: text,
  account_label: text,
  asset: text,
});
