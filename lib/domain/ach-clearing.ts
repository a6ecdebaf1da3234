import { moveLegs, SYSTEM_PARTICIPANTS, systemAccount, type AccountRef, type Leg } from './ledger.js';
import type { Money } from './money.js';
import type { AchTransferType, PaymentStatus } from './payments.js';

/**
 * How ACH-funded executions meet the ledger.
 *
 * Each platform has one ACH clearing account per fiat asset: its own participant, group = the platform code,
 * label `ach_clearing` (so the platform sees it in GET /accounts). It is guarded like any platform account
 * (the platform prefunds it to cover ACH buys it fronts), with one exception: a bank event is a fact from
 * outside and always books, so its leg may take the clearing account below zero (a reversal the platform
 * can't cover). The negative balance is what the platform owes; only bank events can cause it.
 *
 *   execute BUY   clearing --total--> liquidity provider   (the platform fronts the purchase; guarded)
 *   execute SELL  liquidity provider --total--> clearing   (proceeds wait there for the ACH credit)
 *   posted        debit:  external boundary (group `ach`) --payment amount--> clearing  (the customer's money arrived)
 *                 credit: clearing --payment amount--> external boundary               (the money left to the customer's bank)
 *   reversed      the posted movement in the opposite direction (a correction is a new movement, never an edit)
 *   pending, failed  no money moves
 *
 * The external boundary therefore moves exactly the ACH amount the bank sees, so the `ach` boundary account
 * reconciles against the bank statement line by line. What stays in the clearing account once a payment has
 * posted is the bank fee (trade amount + fee in for a buy, trade amount - fee out for a sell), which the
 * platform owes its banking partner. A failed debit leaves the platform short by the fronted total (it
 * recovers that from its customer outside the service); a failed credit leaves the proceeds in clearing.
 */
export const ACH_CLEARING_LABEL = 'ach_clearing';
const ACH_BOUNDARY_GROUP = 'ach';
/** ACH is a US dollar network; a quote in another currency can't be funded through it. */
export const ACH_ASSET = 'USD';

export interface PlatformAccount {
  account: AccountRef;
  platform_code: string | null;
}

export function achClearingAccount(
  platform: { platform_code: string; participant_code: string },
  asset = ACH_ASSET,
): PlatformAccount {
  return {
    account: {
      participant_code: platform.participant_code,
      account_group: platform.platform_code,
      account_label: ACH_CLEARING_LABEL,
      asset,
    },
    platform_code: platform.platform_code,
  };
}

export function achBoundaryAccount(asset = ACH_ASSET): PlatformAccount {
  return {
    account: systemAccount(SYSTEM_PARTICIPANTS.externalBoundary, ACH_BOUNDARY_GROUP, asset),
    platform_code: null,
  };
}

/**
 * The legs a bank event books when a payment reaches `next`, or null when that status moves no money.
 * `clearing` is the clearing account the payment was created against.
 */
export function bankEventLegs(
  payment: { transfer_type: AchTransferType; amount: Money; clearing: PlatformAccount },
  next: PaymentStatus,
): Leg[] | null {
  const boundary = achBoundaryAccount(payment.clearing.account.asset);
  const moneyIn = payment.transfer_type === 'debit';
  const clearingPays = (next === 'posted' && !moneyIn) || (next === 'reversed' && moneyIn);
  if (next !== 'posted' && next !== 'reversed') return null;
  const legs = clearingPays
    ? moveLegs(payment.clearing, boundary, payment.amount)
    : moveLegs(boundary, payment.clearing, payment.amount);
  // The bank has already moved the money: its fact is booked even if the clearing account can't cover it.
  return legs.map((leg) => (leg.account === payment.clearing.account ? { ...leg, mayOverdraw: true as const } : leg));
}
