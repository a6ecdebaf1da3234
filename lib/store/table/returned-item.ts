import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { NumberValue } from '@aws-sdk/lib-dynamodb';

/**
 * The item a failed condition returns (`ReturnValuesOnConditionCheckFailure: 'ALL_OLD'`), which the document
 * client leaves in the low-level form (`{ S: 'x' }`, `{ N: '12' }`), as the document client reads an item
 * (numbers wrapped, as `wrapNumbers` reads them), so its entity can parse it. Scalars only: the items read
 * this way (the TTL table's claims and counters) hold nothing else; any other value is left as it is.
 */
export function documentItemOf(item: Record<string, AttributeValue> | undefined): Record<string, unknown> | undefined {
  if (item === undefined) return undefined;
  return Object.fromEntries(Object.entries(item).map(([name, value]) => [name, scalarOf(value)]));
}

function scalarOf(value: AttributeValue): unknown {
  if (value.S !== undefined) return value.S;
  if (value.N !== undefined) return NumberValue.from(value.N);
  if (value.BOOL !== undefined) return value.BOOL;
  if (value.NULL !== undefined) return null;
  return value;
}
