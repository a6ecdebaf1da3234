import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { Money } from '../domain/money.js';
import type { AppContext } from '../context.js';
import { networkFeeEntity } from './entities/network-fee.js';

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
    new PutCommand(
      networkFeeEntity.put(ctx.tables, { asset: fee.asset, quantity: fee.quantity, updated_at: fee.updated_at }).Put,
    ),
  );
}

export async function getNetworkFee(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  asset: string,
): Promise<{ asset: string; quantity: Money; updated_at: number } | undefined> {
  const out = await ctx.db.send(new GetCommand(networkFeeEntity.get(ctx.tables, { asset })));
  if (!out.Item) return undefined;
  const fee = networkFeeEntity.parse(out.Item);
  return { asset: fee.asset, quantity: new Money(fee.quantity), updated_at: fee.updated_at };
}
