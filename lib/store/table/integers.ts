import { NumberValue } from '@aws-sdk/lib-dynamodb';

// Apart from the money readers (numbers.ts): a module that reads only integers (keys, counters, customers)
// then does not load decimal.js into a function that never handles an amount.

/** An integer (timestamps, counters) from a DynamoDB number read with wrapNumbers. Never for money. */
export function readInteger(value: unknown): number {
  if (value === undefined || value === null) return NaN;
  const text = value instanceof NumberValue ? value.value : String((value as { value?: unknown }).value ?? value);
  const parsed = Number(text);
  if (!Number.isSafeInteger(parsed)) throw new Error(`not a stored integer: ${text}`);
  return parsed;
}

export function readOptionalInteger(value: unknown): number | null {
  return value === undefined || value === null ? null : readInteger(value);
}
