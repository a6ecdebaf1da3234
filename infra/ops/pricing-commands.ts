import { setReferencePrice, setSpread } from '../../lib/pricing/price-source.js';
import { required, type Commands } from './command.js';

/** Reference prices and platform spreads: what every quote is priced from. */
export const pricingCommands: Commands = {
  'price set': {
    usage: 'price set --underlying ASSET --quoted-currency ASSET --price PRICE',
    run: (flags) => setReferencePrice(required(flags, 'underlying'), required(flags, 'quoted-currency'), required(flags, 'price')),
  },
  'platform spread': {
    usage: 'platform spread --platform CODE --bps BPS',
    run: (flags) => setSpread(required(flags, 'platform'), required(flags, 'bps')),
  },
};
