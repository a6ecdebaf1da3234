import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { Money } from '../domain/money.js';
import { keys } from './keys.js';
import { readInteger } from './table/integers.js';
import type { AppContext } from '../context.js';

/**
 * The network fee table: what a withdrawal of an asset costs on its chain, in units of that asset. Set by
 * ops (`fee set`); a convert-withdraw quote reads it and fixes the fee for its lifetime, so a change applies
 * to quotes made after it. One item per asset, overwritten in place.
 */
interface NetworkFee {
  asset: string;
  /** Fixed-point text with the asset's decimals. */
  quantity: string;
  updated_at: number;
}

export async function putNetworkFee(ctx: Pick<AppContext, 'db' | 'tables'>, fee: NetworkFee): Promise<void> {
  await ctx.db.send(
    new PutCommand({
      TableName: ctx.tables.main,
      Item: {
        ...keys.networkFee(fee.asset),
        type: 'network_fee',
        asset: fee.asset,
        quantity: fee.quantity,
        updated_at: fee.updated_at,
      },
    }),
  );
}

export async function getNetworkFee(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  asset: string,
): Promise<{ asset: string; quantity: Money; updated_at: number } | undefined> {
  const out = await ctx.db.send(new GetCommand({ TableName: ctx.tables.main, Key: keys.networkFee(asset) }));
  const item = out.Item;
  if (!item) return undefined;
  return { asset: item.asset, quantity: new Money(String(item.quantity)), updated_at: readInteger(item.updated_at) };
}
