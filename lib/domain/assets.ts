/**
 * The asset registry. `precision` is the number of decimal places an amount of the asset may carry; client
 * amounts with more are rejected, computed amounts are rounded half-even to it.
 */
export type AssetType = 'fiat' | 'crypto';

export interface Asset {
  symbol: string;
  name: string;
  type: AssetType;
  precision: number;
  /** The chain whose address format a withdrawal of this asset must match (crypto only). */
  network: string | null;
  stablecoin: boolean;
}

const ASSETS: readonly Asset[] = [
  { symbol: 'USD', name: 'US Dollar', type: 'fiat', precision: 2, network: null, stablecoin: false },
  { symbol: 'EUR', name: 'Euro', type: 'fiat', precision: 2, network: null, stablecoin: false },
  { symbol: 'BTC', name: 'Bitcoin', type: 'crypto', precision: 8, network: 'bitcoin', stablecoin: false },
  { symbol: 'ETH', name: 'Ethereum', type: 'crypto', precision: 18, network: 'ethereum', stablecoin: false },
  { symbol: 'USDC', name: 'USD Coin', type: 'crypto', precision: 6, network: 'ethereum', stablecoin: true },
  { symbol: 'SOL', name: 'Solana', type: 'crypto', precision: 9, network: 'solana', stablecoin: false },
  { symbol: 'LTC', name: 'Litecoin', type: 'crypto', precision: 8, network: 'litecoin', stablecoin: false },
  { symbol: 'DOGE', name: 'Dogecoin', type: 'crypto', precision: 8, network: 'dogecoin', stablecoin: false },
];

const BY_SYMBOL: ReadonlyMap<string, Asset> = new Map(ASSETS.map((asset) => [asset.symbol, asset]));

export function listAssets(): readonly Asset[] {
  return ASSETS;
}

export function findAsset(symbol: string): Asset | undefined {
  return BY_SYMBOL.get(symbol);
}
