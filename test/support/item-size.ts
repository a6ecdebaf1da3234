import type { AttributeValue } from '@aws-sdk/client-dynamodb';

type Item = Record<string, AttributeValue>;

const utf8 = (text: string) => Buffer.byteLength(text, 'utf8');

/** A number takes about one byte per two significant digits, plus one (leading and trailing zeros aside). */
function numberSize(text: string): number {
  const digits = text.replace(/^-/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return Math.ceil(Math.max(digits.length, 1) / 2) + 1;
}

function valueSize(value: AttributeValue): number {
  if (value.S !== undefined) return utf8(value.S);
  if (value.N !== undefined) return numberSize(value.N);
  if (value.B !== undefined) return value.B.length;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.SS) return value.SS.reduce((sum, entry) => sum + utf8(entry), 0);
  if (value.NS) return value.NS.reduce((sum, entry) => sum + numberSize(entry), 0);
  if (value.BS) return value.BS.reduce((sum, entry) => sum + entry.length, 0);
  // Lists and maps: 3 bytes, plus 1 byte per element (and a map element's name).
  if (value.L) return 3 + value.L.reduce((sum, entry) => sum + 1 + valueSize(entry), 0);
  if (value.M)
    return 3 + Object.entries(value.M).reduce((sum, [name, entry]) => sum + 1 + utf8(name) + valueSize(entry), 0);
  return 0;
}

/**
 * An item's size by DynamoDB's published rules, which price its writes (1 KB per unit, twice that in a
 * transaction): the benchmark's write units (`test/bench/capacity.ts`) and the event-item size test use it.
 */
export function itemSizeBytes(item: Item): number {
  return Object.entries(item).reduce((sum, [name, value]) => sum + utf8(name) + valueSize(value), 0);
}
