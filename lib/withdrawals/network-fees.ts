import { findAsset } from '../domain/assets.js';
import { ValidationError } from '../domain/errors.js';
import { formatAmount, parseAmount } from '../domain/money.js';
import { putNetworkFee } from '../store/network-fees.js';
import type { AppContext } from '../context.js';

/**
 * `fee set`: the network fee a withdrawal of `asset` is charged, in units of the asset. Only assets with a
 * chain can be withdrawn; zero is allowed (a promotion, or a chain with no fee); more decimals than the asset
 * has are refused like any client amount, since the fee is booked exactly as set.
 */
export async function setNetworkFee(
  ctx: AppContext,
  assetSymbol: string,
  quantityText: string,
  nowMs = ctx.clock.nowMs(),
) {
  const asset = findAsset(assetSymbol);
  if (!asset) throw new ValidationError([`asset: unknown asset '${assetSymbol}'`]);
  if (asset.type !== 'crypto' || asset.network === null)
    throw new ValidationError([`asset: ${asset.symbol} is not withdrawn on a chain`]);
  const quantity = parseAmount(quantityText, asset, 'quantity', { allowZero: true });
  if (typeof quantity === 'string') throw new ValidationError([quantity]);
  const fee = { asset: asset.symbol, quantity: formatAmount(quantity, asset), updated_at: nowMs };
  await putNetworkFee(ctx, fee);
  return fee;
}
