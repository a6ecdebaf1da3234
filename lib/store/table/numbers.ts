import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { Money, plain } from '../../domain/money.js';

/** A DynamoDB number holding an exact decimal, from Money. */
export function moneyAttr(amount: Money): NumberValue {
  return NumberValue.from(plain(amount));
}

/** Money from a DynamoDB number read with wrapNumbers (or a string written by us). */
export function readMoney(value: unknown): Money {
  if (value instanceof NumberValue) return new Money(value.value);
  if (typeof value === 'string') return new Money(value);
  if (value && typeof value === 'object' && 'value' in value)
    return new Money(String((value as { value: unknown }).value));
  throw new Error(`not a stored decimal: ${String(value)}`);
}

export { readInteger, readOptionalInteger } from './integers.js';
