import { listAssets } from '../domain/assets.js';

export function assetsMatching(symbol?: string) {
  return listAssets()
    .filter((asset) => !symbol || asset.symbol === symbol.toUpperCase())
    .map(({ symbol, name, type, precision, network, stablecoin }) => ({
      symbol,
      name,
      type,
      precision,
      network,
      stablecoin,
    }));
}
