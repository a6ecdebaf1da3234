import { findAsset } from '../domain/assets.js';
import { NotFoundError, ValidationError } from '../domain/errors.js';
import {
  accountGroupProblem,
  DEFAULT_ACCOUNT_LABEL,
  moveLegs,
  SYSTEM_PARTICIPANTS,
  systemAccount,
  type AccountRef,
  type Movement,
} from '../domain/ledger.js';
import { formatAmount, parseAmount } from '../domain/money.js';
import { getMovement } from '../store/ledger.js';
import { book } from './engine.js';
import { newBookingId } from './booking.js';
import { getParticipant } from '../store/participants.js';
import type { TaggedItem } from '../store/table/transaction-items.js';
import type { AppContext } from '../context.js';

interface DepositRequest {
  participantCode: string;
  asset: string;
  amount: string;
  /** The bank's (or chain's) id of the money that arrived: a deposit books once per reference. */
  reference: string;
  accountGroup?: string;
  accountLabel?: string;
}

interface DepositBooking {
  movement_id: string;
  reference: string;
  participant_code: string;
  account_group: string;
  account_label: string;
  asset: string;
  amount: string;
  /** True when this reference had been booked before: nothing was booked now, this is the original. */
  already_booked: boolean;
}

/** A bank wire id, a transaction hash...: printable, no separators our keys use. */
const REFERENCE = /^[A-Za-z0-9._:/-]{1,100}$/;

/** The same reference with different details is a mistake to stop on, not a repeat to answer. */
class DepositReferenceTakenError extends ValidationError {
  constructor(
    reference: string,
    readonly original: DepositBooking,
  ) {
    super([
      `reference: ${reference} was already booked as a different deposit (${original.amount} ${original.asset} to ${original.participant_code}/${original.account_group}/${original.account_label})`,
    ]);
    this.name = 'DepositReferenceTakenError';
  }
}

/** The movement a reference books: its id is the reference, so the movement record itself is the claim. */
const movementIdOf = (reference: string) => `deposit-${reference}`;

async function originalBooking(ctx: AppContext, reference: string): Promise<DepositBooking | undefined> {
  const movement = await getMovement(ctx, movementIdOf(reference));
  const credit = movement?.legs.find((leg) => !leg.amount.isNegative());
  if (!movement || !credit) return undefined;
  const asset = findAsset(credit.account.asset)!;
  return {
    movement_id: movement.movement_id,
    reference,
    participant_code: credit.account.participant_code,
    account_group: credit.account.account_group,
    account_label: credit.account.account_label,
    asset: asset.symbol,
    amount: formatAmount(credit.amount, asset),
    already_booked: true,
  };
}

/**
 * Credits a participant's account from the external boundary: money arriving from outside (a wire, an
 * on-chain deposit) booked as a movement like any other, so balances still sum to zero per asset. The
 * reference books once: the movement's id derives from it and is created only if absent, in the same
 * transaction as the balances (and `alongWith`, the operator's audit record). The same reference again
 * answers the original booking; with other details it is refused.
 */
export async function deposit(
  ctx: AppContext,
  request: DepositRequest,
  options: { alongWith?: readonly TaggedItem[] } = {},
): Promise<DepositBooking> {
  const errors: string[] = [];
  if (!REFERENCE.test(request.reference)) errors.push('reference: 1 to 100 letters, digits and . _ : / -');
  const asset = findAsset(request.asset);
  if (!asset) errors.push(`asset: unknown asset '${request.asset}'`);
  const amount = asset ? parseAmount(request.amount, asset, 'amount') : undefined;
  if (typeof amount === 'string') errors.push(amount);
  const groupProblem =
    request.accountGroup === undefined ? undefined : accountGroupProblem('account_group', request.accountGroup);
  if (groupProblem) errors.push(groupProblem);
  if (errors.length > 0 || !asset || amount === undefined || typeof amount === 'string')
    throw new ValidationError(errors);
  const participant = await getParticipant(ctx, request.participantCode);
  if (!participant) throw new NotFoundError(`participant not found: ${request.participantCode}`);

  const account: AccountRef = {
    participant_code: participant.participant_code,
    account_group: request.accountGroup ?? participant.platform_code,
    account_label: request.accountLabel ?? DEFAULT_ACCOUNT_LABEL,
    asset: asset.symbol,
  };
  const booking: DepositBooking = {
    movement_id: movementIdOf(request.reference),
    reference: request.reference,
    ...account,
    amount: formatAmount(amount, asset),
    already_booked: false,
  };
  const repeat = async () => {
    const original = await originalBooking(ctx, request.reference);
    if (!original) throw new Error(`deposit reference ${request.reference} is taken but its movement is missing`);
    const same = (['participant_code', 'account_group', 'account_label', 'asset', 'amount'] as const).every(
      (field) => original[field] === booking[field],
    );
    if (!same) throw new DepositReferenceTakenError(request.reference, original);
    return original;
  };

  const movement: Movement = {
    movement_id: booking.movement_id,
    type: 'deposit',
    reference: `deposit:${request.reference}`,
    legs: moveLegs(
      { account: systemAccount(SYSTEM_PARTICIPANTS.externalBoundary, 'deposits', asset.symbol), platform_code: null },
      { account, platform_code: participant.platform_code },
      amount,
    ),
  };
  const nowMs = ctx.clock.nowMs();
  try {
    await book(ctx, {
      id: newBookingId(nowMs),
      atMs: nowMs,
      movement,
      items: options.alongWith ?? [],
      onMovementRecorded: () => new DepositReferenceRepeated(),
    });
  } catch (error) {
    if (error instanceof DepositReferenceRepeated) return repeat();
    throw error;
  }
  return booking;
}

/** Internal: the reference's movement already exists. */
class DepositReferenceRepeated extends Error {
  override readonly name = 'DepositReferenceRepeated';
}
