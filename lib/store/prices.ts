import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { Money } from '../domain/money.js';
import { batchGetItems } from './table/batch-get.js';
import { withRetry } from './table/retry.js';
import { keys } from './keys.js';
import { readInteger } from './table/integers.js';
import type { AppContext } from '../context.js';
import { writtenUnlessConditionFailed } from './table/conditional.js';

/** A reference price as stored: the mid price of a pair before any platform's spread. */
export interface StoredPrice {
  underlying: string;
  quoted_currency: string;
  price: Money;
  /** When the price was observed (ms); the price source refuses it once it is older than the maximum age. */
  updated_at_ms: number;
}

/**
 * Stores a pair's reference price. The price is kept as its exact decimal text (it is never summed in
 * DynamoDB, and a number attribute would cap it at 38 digits). The condition drops an update older than
 * what is stored, so a delayed feed message can't roll the price back.
 * Returns false when a newer price was already there.
 */
export async function putReferencePrice(ctx: Pick<AppContext, 'db' | 'tables'>, price: StoredPrice): Promise<boolean> {
  return writtenUnlessConditionFailed(
    ctx.db.send(
      new PutCommand({
        TableName: ctx.tables.main,
        Item: {
          ...keys.price(price.underlying, price.quoted_currency),
          type: 'price',
          underlying: price.underlying,
          quoted_currency: price.quoted_currency,
          price: price.price.toFixed(),
          updated_at: price.updated_at_ms,
        },
        ConditionExpression: 'attribute_not_exists(pk) OR updated_at <= :updated',
        ExpressionAttributeValues: { ':updated': price.updated_at_ms },
      }),
    ),
  );
}

export async function getReferencePrice(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  underlying: string,
  quotedCurrency: string,
): Promise<StoredPrice | undefined> {
  const out = await withRetry(ctx, { what: 'reference price read' }, () =>
    ctx.db.send(new GetCommand({ TableName: ctx.tables.main, Key: keys.price(underlying, quotedCurrency) })),
  );
  const item = out.Item;
  if (!item) return undefined;
  return {
    underlying: item.underlying,
    quoted_currency: item.quoted_currency,
    price: new Money(String(item.price)),
    updated_at_ms: readInteger(item.updated_at),
  };
}

function toStoredPrice(item: Record<string, any>): StoredPrice {
  return {
    underlying: item.underlying,
    quoted_currency: item.quoted_currency,
    price: new Money(String(item.price)),
    updated_at_ms: readInteger(item.updated_at),
  };
}

/**
 * The stored reference prices of these pairs (at most 100: one BatchGetItem; unprocessed keys are read
 * again under the retry policy). Pairs never priced are absent from the answer.
 */
export async function getReferencePrices(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  pairs: readonly { underlying: string; quoted_currency: string }[],
): Promise<StoredPrice[]> {
  if (pairs.length > 100) throw new Error('getReferencePrices: at most 100 pairs per call');
  const items = await batchGetItems(
    ctx,
    pairs.map((pair) => keys.price(pair.underlying, pair.quoted_currency)),
    { what: 'reference prices read' },
  );
  return items.map(toStoredPrice);
}
