import { randomBytes } from 'node:crypto';
import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { ConflictError, InsufficientFundsError, ValidationError } from '../domain/errors.js';
import type { AccountRef, Leg, Movement } from '../domain/ledger.js';
import { Money, plain } from '../domain/money.js';
import type { Refusal } from '../domain/group-commit.js';
import type { CountChange } from '../store/table/transaction-items.js';
import type { PrepareRead, TaggedItem, TransactItem } from '../store/table/transaction-items.js';

/**
 * A booking is data: everything one request books (its movement, and the records, claims, checks and events
 * that commit with it) as one value the booking engine (`engine.ts`) can commit alone, or queue for an
 * account's committer in another process to commit in a batch with others. What commits it needs nothing
 * but this value; the requesting process keeps only what turns a refusal back into its own error class.
 */
export interface Booking {
  /** Unique and ordered by time (`newBookingId`): a queued booking's key, so its account's queue is in arrival order. */
  id: string;
  atMs: number;
  /** The balance change, when the booking moves money (a payment status change alone moves none). */
  movement?: Movement;
  /** Written in the same transaction, in this order, before the movement's own items. */
  items: readonly TaggedItem[];
  /** What a failed condition on the movement's record means (it exists: a deposit's reference booked before). */
  onMovementRecorded?: () => Error;
}

/** `<ms in base 36, fixed width><16 hex digits>`: sorts by time, unique. */
export function newBookingId(nowMs: number): string {
  return `${nowMs.toString(36).padStart(9, '0')}${randomBytes(8).toString('hex')}`;
}

function refusalOf(error: Error): Refusal {
  if (error instanceof ValidationError) return { status: 400, errors: error.errors };
  if (error instanceof ConflictError) return { status: 409, errors: error.errors };
  return { status: 409, errors: [error.message || error.name] };
}

/** The error a refusal stands for, where the requesting process's own error is not at hand. */
export function errorOfRefusal(refusal: Refusal): Error {
  return refusal.status === 400 ? new ValidationError(refusal.errors) : new ConflictError(refusal.errors);
}

export function insufficientFunds(account: AccountRef, amount: Money): InsufficientFundsError {
  return new InsufficientFundsError(
    `${account.participant_code}/${account.account_group}/${account.account_label}: insufficient ${account.asset} balance for ${amount.abs().toFixed()}`,
  );
}

/** A booking item as stored in a queue: the transaction item, its counters and the refusal its failure means. */
export interface StoredItem {
  item: TransactItem;
  counts?: readonly CountChange[];
  refusal?: Refusal;
  release?: TaggedItem['release'];
}

/** A booking as its account's queue holds it: no closures, amounts as decimal text. */
export interface StoredBooking {
  id: string;
  atMs: number;
  movement?: {
    movement_id: string;
    type: Movement['type'];
    reference: string;
    legs: Array<{ account: AccountRef; platform_code: string | null; amount: string; mayOverdraw?: true }>;
  };
  items: StoredItem[];
  movementRefusal?: Refusal;
}

const NO_READS: PrepareRead = () =>
  Promise.reject(new Error('a booking item may not read: its balance reads are the engine’s'));

/**
 * The booking's items with what they prepare done once (a request's answer sealed for storage), so the
 * value holds its final transaction items. An item that prepares from a read has no place in a booking.
 */
export async function settleItems(items: readonly TaggedItem[]): Promise<TaggedItem[]> {
  const settled = await Promise.all(
    items.map(async (tagged) => (tagged.prepare ? (await tagged.prepare(NO_READS)).items : [tagged])),
  );
  return settled.flat();
}

/**
 * The booking as a queue stores it. `refusals: false` leaves out what each failed condition means: the cold
 * path commits in the requesting process, which answers a refusal from the item's own `onConditionFailed`, so
 * building every item's error up front would only cost each booking a few error objects for nothing.
 */
export function storedBooking(booking: Booking, options: { refusals: boolean } = { refusals: true }): StoredBooking {
  const { movement } = booking;
  const { refusals } = options;
  return {
    id: booking.id,
    atMs: booking.atMs,
    ...(movement && {
      movement: {
        movement_id: movement.movement_id,
        type: movement.type,
        reference: movement.reference,
        legs: movement.legs.map((leg) => ({
          account: leg.account,
          platform_code: leg.platform_code,
          amount: plain(leg.amount),
          ...(leg.mayOverdraw && { mayOverdraw: true as const }),
        })),
      },
    }),
    items: booking.items.map((tagged) => {
      if (tagged.prepare) throw new Error('a booking item must be settled (settleItems) before it is stored');
      return {
        item: tagged.item,
        ...(tagged.counts && { counts: tagged.counts }),
        ...(refusals && tagged.onConditionFailed && { refusal: refusalOf(tagged.onConditionFailed()) }),
        ...(tagged.release && { release: tagged.release }),
      };
    }),
    ...(refusals && booking.onMovementRecorded && { movementRefusal: refusalOf(booking.onMovementRecorded()) }),
  };
}

export function movementOf(stored: StoredBooking): Movement | undefined {
  const movement = stored.movement;
  if (!movement) return undefined;
  return {
    movement_id: movement.movement_id,
    type: movement.type,
    reference: movement.reference,
    legs: movement.legs.map(
      (leg): Leg => ({
        account: leg.account,
        platform_code: leg.platform_code,
        amount: new Money(leg.amount),
        ...(leg.mayOverdraw && { mayOverdraw: true }),
      }),
    ),
  };
}

/**
 * JSON with DynamoDB numbers kept exact: a `NumberValue` (an amount, a counter delta written as one) is
 * stored as `{"$number": "<text>"}` and read back as the same `NumberValue`.
 */
export function encodeBooking(stored: StoredBooking): string {
  return JSON.stringify(stored, (_key, value: unknown) =>
    value instanceof NumberValue ? { $number: value.value } : value,
  );
}

export function decodeBooking(text: string): StoredBooking {
  return JSON.parse(text, (_key, value: unknown) => {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const entries = Object.keys(value);
      if (entries.length === 1 && entries[0] === '$number')
        return NumberValue.from(String((value as { $number: unknown }).$number));
    }
    return value;
  }) as StoredBooking;
}
