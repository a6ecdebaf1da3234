import { createHash } from 'node:crypto';
import { findAsset } from './assets.js';
import { Money, decimalPlaces, plain } from './money.js';

/**
 * Double-entry rules. An account is (participant, group, label, asset). A movement is a set of legs, each a
 * signed amount on one account (negative = debit), that sums to zero per asset: money is never created or
 * destroyed, only moved. Corrections are new reversing movements, never edits.
 */
export interface AccountRef {
  participant_code: string;
  account_group: string;
  account_label: string;
  asset: string;
}

export interface Leg {
  account: AccountRef;
  /** Signed: negative debits the account, positive credits it. */
  amount: Money;
  /** The owner's platform (for listing a platform's accounts); system accounts have none. */
  platform_code: string | null;
  /**
   * A debit that may take its guarded account below zero. Only a fact from outside sets it: a bank event on
   * a platform's ACH clearing account, which must be recorded even when the platform can't cover it (the
   * negative balance is then what the platform owes). Every other debit of the account stays guarded.
   */
  mayOverdraw?: true;
}

export type MovementType =
  | 'deposit'
  | 'transfer'
  | 'trade'
  | 'reward'
  | 'award_fund'
  | 'award_escrow'
  | 'award_distribution'
  | 'withdrawal'
  | 'withdrawal_reversal'
  | 'settlement'
  | 'payment';

export interface Movement {
  movement_id: string;
  type: MovementType;
  legs: Leg[];
  /** What caused it (transfer id, trade id, ...), for tracing a balance back to its origin. */
  reference: string;
}

export const DEFAULT_ACCOUNT_LABEL = 'general';

/**
 * System participants stand for the outside world so that balances sum to zero per asset: the liquidity
 * provider (counterparty of every quote) and the external boundary (deposits, ACH, chain withdrawals). Their
 * codes contain a `0`, which generated participant codes never do, so they can't collide with a customer.
 */
export const SYSTEM_PARTICIPANTS = {
  liquidityProvider: 'SYS0LP',
  externalBoundary: 'SYS0EX',
  fees: 'SYS0FE',
  /**
   * Holds value between the two halves of an operation that can't be one transaction: an award
   * distribution (pool -> escrow, then escrow -> recipients chunk by chunk) and a withdrawal awaiting its
   * custody event. Each operation's own state records guarantee every escrowed amount leaves exactly once.
   */
  escrow: 'SYS0ES',
} as const;

/**
 * The accounts that stand for the world outside and so may go negative: the liquidity provider and the
 * external boundary. Every other account, system ones included (escrow, fees), is guarded like a customer's.
 */
export function isUnguarded(participantCode: string): boolean {
  return (
    participantCode === SYSTEM_PARTICIPANTS.liquidityProvider ||
    participantCode === SYSTEM_PARTICIPANTS.externalBoundary
  );
}

export function systemAccount(participantCode: string, group: string, asset: string): AccountRef {
  return { participant_code: participantCode, account_group: group, account_label: DEFAULT_ACCOUNT_LABEL, asset };
}

export function accountKey(account: AccountRef): string {
  return `${account.participant_code}#${account.account_group}#${account.account_label}#${account.asset}`;
}

/**
 * Account groups a platform names itself: at most 50 letters, digits, `_` and `-`, as
 * the reference API's clients use them. The default group of a participant's accounts is its platform code.
 */
const ACCOUNT_GROUP_PATTERN = /^[A-Za-z0-9_-]{1,50}$/;

/** Why `group` can't name an account group, or undefined when it can. */
export function accountGroupProblem(field: string, group: string): string | undefined {
  return ACCOUNT_GROUP_PATTERN.test(group)
    ? undefined
    : `${field}: must be 1 to 50 letters, digits, _ or - (an account group)`;
}

/** The namespace of account ids (a fixed random UUID: ids are names within it, RFC 9562 section 5.5). */
const ACCOUNT_ID_NAMESPACE = Buffer.from('3d0c6f52a9b84e1f9e7a21c4b5d8f063', 'hex');

/**
 * An account's stable id: a name-based UUID (version 5) of its four parts, so it is the same whenever the
 * account is written, needs no read to know, and can't collide with another account's.
 */
export function accountIdOf(account: AccountRef): string {
  const bytes = createHash('sha1')
    .update(ACCOUNT_ID_NAMESPACE)
    .update(accountKey(account), 'utf8')
    .digest()
    .subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function sameAccount(a: AccountRef, b: AccountRef): boolean {
  return accountKey(a) === accountKey(b);
}

/** A two-leg movement of `amount` from one account to another. */
export function moveLegs(
  from: { account: AccountRef; platform_code: string | null },
  to: { account: AccountRef; platform_code: string | null },
  amount: Money,
): Leg[] {
  return [
    { account: from.account, platform_code: from.platform_code, amount: amount.negated() },
    { account: to.account, platform_code: to.platform_code, amount },
  ];
}

/**
 * The movement's invariants; a violation is a programming error, not a client mistake, so it throws a plain
 * Error (a 500) before anything is written.
 */
export function assertBalanced(movement: Movement): void {
  if (movement.legs.length === 0) throw new Error(`movement ${movement.movement_id} has no legs`);
  const sums = new Map<string, Money>();
  for (const leg of movement.legs) {
    const asset = findAsset(leg.account.asset);
    if (!asset) throw new Error(`movement ${movement.movement_id}: unknown asset ${leg.account.asset}`);
    if (leg.amount.isZero())
      throw new Error(`movement ${movement.movement_id}: zero leg on ${accountKey(leg.account)}`);
    if (decimalPlaces(plain(leg.amount.abs())) > asset.precision) {
      throw new Error(`movement ${movement.movement_id}: leg ${plain(leg.amount)} exceeds ${asset.symbol} precision`);
    }
    sums.set(asset.symbol, (sums.get(asset.symbol) ?? new Money(0)).plus(leg.amount));
  }
  for (const [asset, sum] of sums) {
    if (!sum.isZero()) throw new Error(`movement ${movement.movement_id} does not balance in ${asset}: ${plain(sum)}`);
  }
}

/**
 * Net change per account. DynamoDB allows one operation per item in a transaction, so legs touching the same
 * account are combined before the balance updates are built.
 */
export interface NetChange {
  account: AccountRef;
  platform_code: string | null;
  change: Money;
  /** Every leg on this account may overdraw it (see `Leg.mayOverdraw`). */
  mayOverdraw: boolean;
}

export function netChanges(legs: readonly Leg[]): NetChange[] {
  const byAccount = new Map<string, NetChange>();
  for (const leg of legs) {
    const key = accountKey(leg.account);
    const current = byAccount.get(key);
    if (current) {
      current.change = current.change.plus(leg.amount);
      current.mayOverdraw &&= leg.mayOverdraw === true;
    } else
      byAccount.set(key, {
        account: leg.account,
        platform_code: leg.platform_code,
        change: leg.amount,
        mayOverdraw: leg.mayOverdraw === true,
      });
  }
  return [...byAccount.values()].filter((entry) => !entry.change.isZero());
}
