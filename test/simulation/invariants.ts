import { Money } from '../../lib/domain/money.js';

/**
 * What the simulation asserts, as pure checks over what it saw and what the table
 * holds; the driver feeds them and collects the violations with the operation they concern.
 */

export interface Violation {
  invariant: string;
  /** The operation it concerns (the first one it could be tied to), when any. */
  op: number | undefined;
  message: string;
}

/** The answers one `X-Request-Id` got, in order: once one is a 2xx, every later definitive answer must be it, byte for byte. */
export class AnswerLedger {
  private readonly first = new Map<string, { status: number; text: string; op: number }>();
  checked = 0;

  /** Records a definitive answer; returns a violation when it differs from the id's first 2xx. */
  record(requestId: string, op: number, answer: { status: number; text: string }): string | undefined {
    const first = this.first.get(requestId);
    if (first) {
      this.checked += 1;
      if (first.status !== answer.status || first.text !== answer.text) {
        return `request ${requestId} (first answered in op ${first.op}) answered ${answer.status} ${answer.text.slice(0, 300)} after ${first.status} ${first.text.slice(0, 300)}`;
      }
      return undefined;
    }
    if (answer.status >= 200 && answer.status < 300) this.first.set(requestId, { ...answer, op });
    return undefined;
  }

  firstAnswer(requestId: string): { status: number; text: string } | undefined {
    return this.first.get(requestId);
  }
}

/** One `account_balance.changed` event's data, as delivered and as stored. */
export interface BalanceChange {
  account_id: string;
  account_label: string;
  balance: string;
  movement: { movement_id: string; type: string; change: string };
}

/**
 * No guarded balance below zero after any change. The one exception the service allows (docs/ledger.md): a bank's
 * event (a `payment` movement) on a platform's ACH clearing account is booked even when the account can't
 * cover it; every other debit of that account stays guarded.
 */
export function negativeBalance(change: BalanceChange): string | undefined {
  const balance = new Money(change.balance);
  if (!balance.lt(0)) return undefined;
  const bankFact = change.account_label === 'ach_clearing' && change.movement.type === 'payment';
  const credit = new Money(change.movement.change).gt(0);
  // A credit to an account already below zero (the platform paying back) leaves it negative but moved it up.
  if (bankFact || (change.account_label === 'ach_clearing' && credit)) return undefined;
  return `account ${change.account_id} (${change.account_label}) went to ${change.balance} by ${change.movement.type} ${change.movement.movement_id} (${change.movement.change})`;
}
