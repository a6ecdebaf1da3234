import { describe, expect, it } from 'vitest';
import { achBoundaryAccount, achClearingAccount, bankEventLegs } from '../../lib/domain/ach-clearing.js';
import { SYSTEM_PARTICIPANTS } from '../../lib/domain/ledger.js';
import { Money } from '../../lib/domain/money.js';
import { PAYMENT_STATUSES } from '../../lib/domain/payments.js';

const clearing = achClearingAccount({ platform_code: 'PLAT23', participant_code: 'PLAT23' });
const legsOf = (transfer_type: 'debit' | 'credit', status: (typeof PAYMENT_STATUSES)[number]) =>
  bankEventLegs({ transfer_type, amount: new Money('101.50'), clearing }, status)?.map((leg) => [
    leg.account.participant_code,
    leg.account.account_label,
    leg.amount.toFixed(),
  ]);

describe('ACH clearing', () => {
  it("is the platform's own USD account labelled ach_clearing; the boundary is the external boundary's ach group", () => {
    expect(clearing).toEqual({
      account: { participant_code: 'PLAT23', account_group: 'PLAT23', account_label: 'ach_clearing', asset: 'USD' },
      platform_code: 'PLAT23',
    });
    expect(achBoundaryAccount().account).toEqual({
      participant_code: SYSTEM_PARTICIPANTS.externalBoundary,
      account_group: 'ach',
      account_label: 'general',
      asset: 'USD',
    });
  });

  it('posting a debit brings the payment amount in from the boundary; reversing it sends it back', () => {
    expect(legsOf('debit', 'posted')).toEqual([
      [SYSTEM_PARTICIPANTS.externalBoundary, 'general', '-101.5'],
      ['PLAT23', 'ach_clearing', '101.5'],
    ]);
    expect(legsOf('debit', 'reversed')).toEqual([
      ['PLAT23', 'ach_clearing', '-101.5'],
      [SYSTEM_PARTICIPANTS.externalBoundary, 'general', '101.5'],
    ]);
  });

  it('posting a credit sends the payment amount out to the boundary; reversing it brings it back', () => {
    expect(legsOf('credit', 'posted')).toEqual([
      ['PLAT23', 'ach_clearing', '-101.5'],
      [SYSTEM_PARTICIPANTS.externalBoundary, 'general', '101.5'],
    ]);
    expect(legsOf('credit', 'reversed')).toEqual([
      [SYSTEM_PARTICIPANTS.externalBoundary, 'general', '-101.5'],
      ['PLAT23', 'ach_clearing', '101.5'],
    ]);
  });

  it.each(['submitted', 'pending', 'failed'] as const)('%s moves no money', (status) => {
    expect(legsOf('debit', status)).toBeUndefined();
    expect(legsOf('credit', status)).toBeUndefined();
  });
});
