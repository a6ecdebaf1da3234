import { Money } from './money.js';

/**
 * Group commit in memory: bookings applied one after another to the balances of one consistent read, as a
 * batch that then commits in one transaction (lib/ledger/batch.ts; a hot account's rounds,
 * lib/ledger/hot-account.ts). Pure, so a property test can show that any batching of a sequence of bookings
 * gives the same balances and the same answers as booking them one by one.
 */

/** An account as the batch sees it: its balance and how many balance changes it has had (its version). */
export interface AccountState {
  balance: Money;
  /** Changes so far: numbers the account's `account_balance.changed` events; -1 for an account never written. */
  version: number;
}

/** One account a booking changes, by its key, and whether a debit of it must stay covered. */
export interface AccountChange {
  key: string;
  change: Money;
  /** A debit that may not take the balance below zero (customer, platform and escrow accounts). */
  guarded: boolean;
}

type AppliedBooking =
  /** `after`: each changed account's balance and version just after this booking. */
  | { kind: 'booked'; after: Array<{ key: string; balance: Money; version: number }> }
  /** The debit of `key` was not covered: this booking alone is refused, nothing of it is applied. */
  | { kind: 'refused'; key: string; balance: Money; change: Money };

/**
 * Applies one booking to `states` (changed in place when it books). A booking books whole or not at all:
 * every guarded debit is checked against the balance left by the bookings before it.
 */
export function applyBooking(states: Map<string, AccountState>, changes: readonly AccountChange[]): AppliedBooking {
  for (const { key, change, guarded } of changes) {
    const balance = states.get(key)?.balance ?? new Money(0);
    if (guarded && change.isNegative() && balance.plus(change).isNegative())
      return { kind: 'refused', key, balance, change };
  }
  const after = changes.map(({ key, change }) => {
    const current = states.get(key) ?? { balance: new Money(0), version: -1 };
    // An account written before accounts carried a version reads as 0: its first counted change is 1.
    const next = { balance: current.balance.plus(change), version: Math.max(0, current.version) + 1 };
    states.set(key, next);
    return { key, ...next };
  });
  return { kind: 'booked', after };
}

/** Applies bookings in order; what each got, and the states after all of them. */
export function applyInOrder(
  start: ReadonlyMap<string, AccountState>,
  bookings: ReadonlyArray<readonly AccountChange[]>,
) {
  const states = new Map(start);
  const outcomes = bookings.map((changes) => applyBooking(states, changes));
  return { outcomes, states };
}

/**
 * Why one item of a booking can fail, as data: the error a committer elsewhere records for the request (the
 * requesting process rebuilds its own error class from the item's `onConditionFailed`).
 */
export interface Refusal {
  /** 400 or 409, as the error maps to HTTP. */
  status: 400 | 409;
  errors: string[];
}

/** What a queued booking's result says: booked, or refused with the reason (and which of its items failed). */
export interface BookingResult {
  outcome: 'booked' | 'refused';
  refusal?: Refusal;
  /** The booking's own item whose condition failed, when one did (its index among `Booking.items`). */
  item?: number;
  /** The movement's record existed already. */
  movementRecorded?: boolean;
}
