import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { Money } from '../domain/money.js';
import { batchGetItems } from './table/batch-get.js';
import { withRetry } from './table/retry.js';
import type { AppContext } from '../context.js';
import { writtenUnlessConditionFailed } from './table/conditional.js';
import { priceEntity } from './entities/price.js';
import { platformEntity, type Platform } from './entities/platform.js';
import { participantEntity, type Participant } from './entities/participant.js';

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
      new PutCommand(
        priceEntity.put(
          ctx.tables,
          {
            underlying: price.underlying,
            quoted_currency: price.quoted_currency,
            price: price.price.toFixed(),
            updated_at: price.updated_at_ms,
          },
          {
            condition: 'attribute_not_exists(pk) OR updated_at <= :updated',
            values: { ':updated': price.updated_at_ms },
          },
        ).Put,
      ),
    ),
  );
}

export async function getReferencePrice(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  underlying: string,
  quotedCurrency: string,
): Promise<StoredPrice | undefined> {
  const out = await withRetry(ctx, { what: 'reference price read' }, () =>
    ctx.db.send(new GetCommand(priceEntity.get(ctx.tables, { underlying, quoted_currency: quotedCurrency }))),
  );
  return out.Item ? storedPrice(out.Item) : undefined;
}

/** What a purchase is priced from, read together: each absent when its item is. */
export interface PricingInputs {
  platform?: Platform;
  price?: StoredPrice;
  /** The participant asked for, when one was. */
  participant?: Participant;
}

/**
 * A purchase's reads in one BatchGetItem rather than a GetItem each: the platform (its spread), the pair's
 * reference price and, when given, the participant the purchase is for. A purchase that books straight away
 * (a reward, an award funding) is then this call and its transaction.
 */
export async function getPricingInputs(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  wanted: { platformCode: string; underlying: string; quotedCurrency: string; participantCode?: string },
): Promise<PricingInputs> {
  const platformKey = platformEntity.key({ platform_code: wanted.platformCode });
  const priceKey = priceEntity.key({ underlying: wanted.underlying, quoted_currency: wanted.quotedCurrency });
  const participantKey =
    wanted.participantCode === undefined
      ? undefined
      : participantEntity.key({ participant_code: wanted.participantCode });
  const items = await batchGetItems(
    ctx,
    participantKey ? [platformKey, priceKey, participantKey] : [platformKey, priceKey],
    {
      what: 'pricing inputs read',
    },
  );
  // DynamoDB answers in its own order: each item is told by its key.
  const keyed = (key: Record<string, string>) => items.find((item) => item.pk === key.pk && item.sk === key.sk);
  const platform = keyed(platformKey);
  const price = keyed(priceKey);
  const participant = participantKey && keyed(participantKey);
  return {
    platform: platform && platformEntity.parse(platform),
    price: price && storedPrice(price),
    participant: participant ? participantEntity.parse(participant) : undefined,
  };
}

/** A price item read back, its text as Money and its time under the name the price source uses. */
function storedPrice(item: Record<string, unknown>): StoredPrice {
  const price = priceEntity.parse(item);
  return {
    underlying: price.underlying,
    quoted_currency: price.quoted_currency,
    price: new Money(price.price),
    updated_at_ms: price.updated_at,
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
    pairs.map((pair) => priceEntity.key(pair)),
    { what: 'reference prices read' },
  );
  return items.map(storedPrice);
}
