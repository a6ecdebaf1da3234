import { setReferencePrice, setSpread } from '../../lib/pricing/price-source.js';
import { required, type Commands } from './command.js';

/** Reference prices and platform spreads: what every quote is priced from. */
export const pricingCommands: Commands = {
  'price set': {
    usage: 'price set --underlying ASSET --quoted-currency ASSET --price PRICE [--force]',
    options: {
      underlying: { type: 'string', required: true },
      'quoted-currency': { type: 'string', required: true },
      price: { type: 'string', required: true },
      force: { type: 'boolean' },
    },
    mutates: true,
    run: async (flags, ctx, audit) => {
      const result = await setReferencePrice(
        ctx,
        required(flags, 'underlying'),
        required(flags, 'quoted-currency'),
        required(flags, 'price'),
        { force: flags.force === true },
      );
      await audit.record({ ...result, forced: flags.force === true });
      return result;
    },
  },
  'platform spread': {
    usage: 'platform spread --platform CODE --bps BPS',
    options: { platform: { type: 'string', required: true }, bps: { type: 'string', required: true } },
    mutates: true,
    run: async (flags, ctx, audit) => {
      const result = await setSpread(ctx, required(flags, 'platform'), required(flags, 'bps'));
      await audit.record(result);
      return result;
    },
  },
};
