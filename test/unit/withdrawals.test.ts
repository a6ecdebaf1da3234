import { describe, expect, it } from 'vitest';
import { assertBalanced, netChanges, type AccountRef } from '../../lib/domain/ledger.js';
import { Money } from '../../lib/domain/money.js';
import {
  custodyOutcomeLegs,
  decideCustodyEvent,
  networkFeeAccount,
  withdrawalEscrowAccount,
  withdrawalExecutionLegs,
} from '../../lib/domain/withdrawals.js';

const account = (participant_code: string, asset: string): AccountRef => ({
  participant_code,
  account_group: 'PLAT01',
  account_label: 'general',
  asset,
});

describe('custody events', () => {
  it('applies an outcome to a PENDING request once, ignores a redelivery, refuses the other outcome', () => {
    expect(decideCustodyEvent('PENDING', { status: 'CONFIRMED', transaction_hash: '0xabc' })).toEqual({
      kind: 'apply',
      next: 'CONFIRMED',
    });
    expect(decideCustodyEvent('PENDING', { status: 'FAILED' })).toEqual({ kind: 'apply', next: 'FAILED' });
    expect(decideCustodyEvent('CONFIRMED', { status: 'CONFIRMED', transaction_hash: '0xabc' })).toEqual({
      kind: 'noop',
    });
    expect(decideCustodyEvent('FAILED', { status: 'FAILED' })).toEqual({ kind: 'noop' });
    expect(decideCustodyEvent('FAILED', { status: 'CONFIRMED', transaction_hash: '0xabc' })).toMatchObject({
      kind: 'illegal',
    });
    expect(decideCustodyEvent('CONFIRMED', { status: 'FAILED' })).toMatchObject({ kind: 'illegal' });
  });

  it('needs a transaction hash to confirm, and knows only CONFIRMED and FAILED', () => {
    expect(decideCustodyEvent('PENDING', { status: 'CONFIRMED' })).toEqual({
      kind: 'illegal',
      message: 'transaction_hash: required to confirm a withdrawal',
    });
    expect(decideCustodyEvent('PENDING', { status: 'PENDING' })).toMatchObject({ kind: 'illegal' });
    expect(decideCustodyEvent('PENDING', { status: 'confirmed' })).toMatchObject({ kind: 'illegal' });
  });
});

describe('withdrawal legs', () => {
  const withdrawal = {
    asset: 'ETH',
    source: { account: account('CUST01', 'ETH'), platform_code: 'PLAT01' },
    escrow: withdrawalEscrowAccount('PLAT01', 'ETH'),
    feeAccount: networkFeeAccount('ETH'),
    quantity: new Money('1'),
    networkFeeQuantity: new Money('0.002'),
  };
  const fee = {
    payer: { account: account('CUST01', 'EUR'), platform_code: 'PLAT01' },
    provider: { underlying: account('SYS0LP', 'ETH'), quoted: account('SYS0LP', 'EUR') },
    networkFeeNotional: new Money('5.00'),
  };

  it('execution and FAILED balance per asset, and FAILED exactly undoes what execution moved into escrow and fees', () => {
    const execution = withdrawalExecutionLegs(withdrawal, fee);
    const failed = custodyOutcomeLegs(withdrawal, 'FAILED');
    assertBalanced({ movement_id: 'e', type: 'withdrawal', reference: 'r', legs: execution });
    assertBalanced({ movement_id: 'f', type: 'withdrawal_reversal', reference: 'r', legs: failed });
    const net = netChanges(failed).map(({ account, change }) => [
      account.participant_code,
      account.account_label,
      change.toFixed(),
    ]);
    expect(net).toEqual([
      ['SYS0ES', 'withdrawals', '-1'],
      ['CUST01', 'general', '1.002'],
      ['SYS0FE', 'general', '-0.002'],
    ]);
  });

  it('books no zero legs when the fee or its notional is zero', () => {
    const free = withdrawalExecutionLegs(
      { ...withdrawal, networkFeeQuantity: new Money(0) },
      { ...fee, networkFeeNotional: new Money(0) },
    );
    expect(free).toHaveLength(2);
    const dust = withdrawalExecutionLegs(
      { ...withdrawal, networkFeeQuantity: new Money('0.000000000000000001') },
      { ...fee, networkFeeNotional: new Money(0) },
    );
    assertBalanced({ movement_id: 'd', type: 'withdrawal', reference: 'r', legs: dust });
    expect(custodyOutcomeLegs({ ...withdrawal, networkFeeQuantity: new Money(0) }, 'FAILED')).toHaveLength(2);
    expect(custodyOutcomeLegs(withdrawal, 'CONFIRMED').map((leg) => leg.account.participant_code)).toEqual([
      'SYS0ES',
      'SYS0EX',
    ]);
  });
});
