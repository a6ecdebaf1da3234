import { describe, expect, it } from 'vitest';
import { accountIdOf } from '../../lib/domain/ledger.js';
import { Money } from '../../lib/domain/money.js';
import { listEvents } from '../support/events.js';
import { balances, fund } from '../support/ledger.js';
import { newPlatform, type TestPlatform } from '../support/service.js';

/**
 * Group commit (lib/store/README.md, "Hot accounts"): a platform's own account taking many concurrent
 * bookings answers every one of them, with the same answers and events as if they were booked one by one.
 */

const payout = (platform: TestPlatform, index: number, amount = '1') => ({
  from_participant_code: platform.participantCode,
  from_account_group: platform.platformCode,
  from_account_label: 'general',
  to_participant_code: platform.participantCode,
  to_account_group: platform.platformCode,
  to_account_label: `payee-${index}`,
  asset: 'USD',
  amount,
});

/** The account's `account_balance.changed` events in sequence order, each checked against the one before. */
async function balanceHistory(platform: TestPlatform, label: string) {
  const accountId = accountIdOf({ participant_code: platform.participantCode, account_group: platform.platformCode, account_label: label, asset: 'USD' });
  const events = (await listEvents(platform, `&type=account_balance.changed&resource_id=${accountId}`)).sort((a, b) => a.sequence - b.sequence);
  let previous = new Money(0);
  for (const [index, event] of events.entries()) {
    expect(event.sequence, 'consecutive sequences').toBe(index + 1);
    const data = event.data as { balance: string; movement: { change: string } };
    expect(new Money(data.balance).toFixed(), `event ${event.sequence}: previous + change`).toBe(previous.plus(data.movement.change).toFixed());
    previous = new Money(data.balance);
  }
  return { events, last: previous };
}

describe('a hot account', () => {
  it('160 concurrent debits of an account funded for 100: exactly 100 book, 60 get 400, none 503; 101 consecutive events', { timeout: 120_000 }, async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '100');
    const results = await Promise.all(Array.from({ length: 160 }, (_, i) => platform.post('/transfers', payout(platform, i))));
    const statuses = results.map((response) => response.status);
    expect(statuses.filter((status) => status >= 500), results.find((r) => r.status >= 500)?.text).toEqual([]);
    expect(statuses.filter((status) => status === 201)).toHaveLength(100);
    expect(statuses.filter((status) => status === 400)).toHaveLength(60);
    for (const refused of results.filter((response) => response.status === 400)) {
      expect(refused.body.errors).toEqual([`${platform.participantCode}/${platform.platformCode}/general: insufficient USD balance for 1`]);
    }
    const after = { ...(await balances(platform, '?page_size=100')), ...(await balances(platform, '?page_size=100&page=2')) };
    expect(after[`${platform.participantCode}/general/USD`]).toBe('0.00');
    const credited = results.flatMap((response, i) => (response.status === 201 ? [`${platform.participantCode}/payee-${i}/USD`] : []));
    expect(Object.keys(after).filter((key) => key.includes('/payee-')).sort()).toEqual(credited.sort());
    for (const key of credited) expect(after[key]).toBe('1.00');

    const { events, last } = await balanceHistory(platform, 'general');
    expect(events).toHaveLength(101);
    expect(last.toFixed()).toBe('0');
    // Each booked transfer's event names its own movement, once.
    const transfers = results.filter((response) => response.status === 201).map((response) => response.body.movement_id ?? response.body.message?.movement_id);
    const movements = events.slice(1).map((event) => (event.data as { movement: { movement_id: string } }).movement.movement_id);
    expect(new Set(movements).size).toBe(100);
    if (transfers.every((id) => typeof id === 'string')) expect(new Set(movements)).toEqual(new Set(transfers));
  });
});
