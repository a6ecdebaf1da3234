import { awardsEscrowAccount } from '../../lib/awards/distribute-awards.js';
import { ESCROW_LANES } from '../../lib/domain/awards.js';
import { Money } from '../../lib/domain/money.js';
import { balancesOf } from './ledger.js';
import type { TestPlatform } from './service.js';

/** The awards tests' views of a platform's award accounts (test/integration/awards*.test.ts). */

export function pool(platform: TestPlatform, asset = 'BTC') {
  return {
    participant_code: platform.participantCode,
    account_group: platform.platformCode,
    account_label: 'awards',
    asset,
  };
}

/** What the platform's award escrow holds for the asset: the sum of its lanes (`ESCROW_LANES`). */
export async function escrowBalance(platform: TestPlatform, asset = 'BTC'): Promise<Money> {
  const held = await balancesOf(escrowLanes(platform, asset));
  return held.reduce((sum, balance) => sum.plus(balance), new Money(0));
}

export function escrowLanes(platform: TestPlatform, asset = 'BTC') {
  return Array.from(
    { length: ESCROW_LANES },
    (_, lane) => awardsEscrowAccount(platform.platformCode, asset, lane).account,
  );
}

export function customerAccount(platform: TestPlatform, code: string, asset = 'BTC') {
  return { participant_code: code, account_group: platform.platformCode, account_label: 'general', asset };
}

export async function customerBalances(
  platform: TestPlatform,
  codes: readonly string[],
  asset = 'BTC',
): Promise<string[]> {
  return (await balancesOf(codes.map((code) => customerAccount(platform, code, asset)))).map((balance) =>
    balance.toFixed(),
  );
}
