import type { AppContext } from '../../lib/context.js';
import { ctx } from './context.js';
import { runAdmin } from '../../infra/ops/cli.js';

/**
 * Sets a reference price the way ops do (`npm run admin -- price set ...`). Prices are per pair and shared
 * by every test file of the run (files run in parallel on one DynamoDB Local), so each file prices its own
 * pairs: liquidity BTC/USD, SOL/USD and DOGE/EUR, payments LTC/USD and LTC/EUR, rewards ETH/USD and SOL/EUR,
 * awards BTC/EUR, convert-withdraw ETH/EUR and USDC/USD (participant-status too, at the same price). Never set a price while the clock is
 * advanced: a price stamped in the future refuses older updates until real time catches up.
 */
export async function setPrice(
  underlying: string,
  quotedCurrency: string,
  price: string,
  on: AppContext = ctx,
): Promise<void> {
  await runAdmin(
    [
      'price',
      'set',
      '--underlying',
      underlying,
      '--quoted-currency',
      quotedCurrency,
      '--price',
      price,
      '--force',
      '--reason',
      'test',
    ],
    { ctx: on },
  );
}
