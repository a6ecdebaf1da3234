import { describe, expect, it } from 'vitest';
import { InsufficientFundsError } from '../../lib/domain/errors.js';
import { moveLegs, SYSTEM_PARTICIPANTS, systemAccount, type AccountRef } from '../../lib/domain/ledger.js';
import { Money } from '../../lib/domain/money.js';
import { newId } from '../../lib/store/codes.js';
import { balanceOf } from '../../lib/store/ledger.js';
import { bookMovement } from '../../lib/ledger/engine.js';
import { createPlatform } from '../../lib/store/platforms.js';
import { ctx } from '../support/context.js';

/** Which accounts may go negative: only those standing for the world outside. */
describe('balance guards on system accounts', () => {
  const book = (from: AccountRef, to: AccountRef, amount: string) =>
    bookMovement(ctx, {
      movement_id: newId(),
      type: 'transfer',
      reference: 'test',
      legs: moveLegs({ account: from, platform_code: null }, { account: to, platform_code: null }, new Money(amount)),
    });

  it.each([
    ['escrow', SYSTEM_PARTICIPANTS.escrow],
    ['fees', SYSTEM_PARTICIPANTS.fees],
  ])('%s is guarded like a customer account: an overdraw is refused and writes nothing', async (_name, participant) => {
    const group = `guard-${newId()}`;
    const guarded = systemAccount(participant, group, 'USD');
    const boundary = systemAccount(SYSTEM_PARTICIPANTS.externalBoundary, group, 'USD');
    await expect(book(guarded, boundary, '0.01')).rejects.toBeInstanceOf(InsufficientFundsError);
    await book(boundary, guarded, '5');
    await expect(book(guarded, boundary, '5.01')).rejects.toBeInstanceOf(InsufficientFundsError);
    await book(guarded, boundary, '5');
    expect((await balanceOf(ctx, guarded)).toFixed()).toBe('0');
    expect((await balanceOf(ctx, boundary)).toFixed()).toBe('0');
  });

  it('the liquidity provider and the external boundary may go negative', async () => {
    const { participant_code } = await createPlatform(ctx, 'guards');
    const customer: AccountRef = { participant_code, account_group: 'g', account_label: 'general', asset: 'USD' };
    for (const outside of [SYSTEM_PARTICIPANTS.liquidityProvider, SYSTEM_PARTICIPANTS.externalBoundary]) {
      const account = systemAccount(outside, `guard-${newId()}`, 'USD');
      await book(account, customer, '1');
      expect((await balanceOf(ctx, account)).toFixed()).toBe('-1');
    }
  });
});
