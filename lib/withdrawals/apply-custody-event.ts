import * as z from 'zod/mini';
import { NotFoundError, ValidationError } from '../domain/errors.js';
import { Money } from '../domain/money.js';
import { custodyOutcomeLegs, decideCustodyEvent } from '../domain/withdrawals.js';
import { bookMovement } from '../ledger/engine.js';
import { getWithdrawal, withdrawalOutcomeItems, WithdrawalStatusChangedError } from '../store/withdrawals.js';
import { type Withdrawal } from '../domain/withdrawals.js';
import { formatIssues, isPlainObject, messageId, nonEmptyString } from '../domain/validation.js';
import type { AppContext } from '../context.js';

interface CustodyEvent {
  withdrawal_request_id: string;
  status: string;
  transaction_hash?: string | null;
}

interface CustodyEventResult {
  /** `applied`: the outcome was booked; `noop`: a redelivery of the outcome already booked. */
  outcome: 'applied' | 'noop';
  withdrawal: CustodyOutcomeView;
}

/** The withdrawal as a custody event's outcome reports it (the ops command and the consumer's log), not the API's view. */
function custodyOutcomeView(withdrawal: Withdrawal) {
  return {
    withdrawal_request_id: withdrawal.withdrawal_request_id,
    participant_code: withdrawal.participant_code,
    account_group: withdrawal.account_group,
    account_label: withdrawal.account_label,
    asset: withdrawal.asset,
    address: withdrawal.address,
    requested_amount: withdrawal.requested_amount,
    fee_amount: withdrawal.fee_amount,
    status: withdrawal.status,
    transaction_hash: withdrawal.transaction_hash,
    trade_id: withdrawal.trade_id,
    created_at: withdrawal.created_at,
    updated_at: withdrawal.updated_at,
  };
}

type CustodyOutcomeView = ReturnType<typeof custodyOutcomeView>;

/** Two deliveries racing on one request re-decide on what the winner left; a few rounds settle any race. */
const MAX_ROUNDS = 5;

/**
 * Applies custody's outcome to a PENDING withdrawal: CONFIRMED (with the chain's transaction hash) releases
 * the escrowed quantity to the external boundary; FAILED returns the quantity and the fee to the participant
 * in a reversing movement. One transaction each: the status update conditioned on PENDING and the movement,
 * whose id is derived from the request and the outcome so it can exist once. A redelivery is a no-op; the
 * other outcome after one was booked is refused.
 */
export async function applyCustodyEvent(ctx: AppContext, event: CustodyEvent): Promise<CustodyEventResult> {
  for (let round = 1; ; round++) {
    const withdrawal = await getWithdrawal(ctx, event.withdrawal_request_id);
    if (!withdrawal) throw new NotFoundError(`withdrawal request not found: ${event.withdrawal_request_id}`);
    const decision = decideCustodyEvent(withdrawal.status, event);
    if (decision.kind === 'noop') return { outcome: 'noop', withdrawal: custodyOutcomeView(withdrawal) };
    if (decision.kind === 'illegal') throw new ValidationError([decision.message]);

    const nowMs = ctx.clock.nowMs();
    const hash = decision.next === 'CONFIRMED' ? (event.transaction_hash ?? null) : null;
    const legs = custodyOutcomeLegs(
      {
        asset: withdrawal.asset,
        source: { account: withdrawal.source_account, platform_code: withdrawal.platform_code },
        escrow: withdrawal.escrow_account,
        feeAccount: withdrawal.fee_account,
        quantity: new Money(withdrawal.requested_amount),
        networkFeeQuantity: new Money(withdrawal.fee_amount),
      },
      decision.next,
    );
    const movement = {
      movement_id: `withdrawal-${withdrawal.withdrawal_request_id}-${decision.next}`,
      type: decision.next === 'CONFIRMED' ? ('withdrawal' as const) : ('withdrawal_reversal' as const),
      reference: `withdrawal:${withdrawal.withdrawal_request_id}`,
      legs,
    };
    try {
      // The status condition goes first, so a lost race reads as such.
      await bookMovement(ctx, movement, withdrawalOutcomeItems(ctx, withdrawal, decision.next, hash, nowMs), nowMs);
      return {
        outcome: 'applied',
        withdrawal: custodyOutcomeView({
          ...withdrawal,
          status: decision.next,
          transaction_hash: hash,
          updated_at: nowMs,
        }),
      };
    } catch (error) {
      if (error instanceof WithdrawalStatusChangedError && round < MAX_ROUNDS) continue;
      throw error;
    }
  }
}

const HASH_TEXT = 'must be a non-empty string of at most 200 characters';

/** A custody outcome as the custodian's integration sends it; which statuses apply is the domain's rule. */
const custodyEventMessage = z.object({
  withdrawal_request_id: messageId(),
  status: nonEmptyString(),
  transaction_hash: z.optional(
    z.nullable(z.string(HASH_TEXT).check(z.minLength(1, HASH_TEXT), z.maxLength(200, HASH_TEXT))),
  ),
});

type CustodyEventReply =
  | { result: 'applied' | 'noop'; withdrawal: CustodyOutcomeView }
  | { result: 'rejected'; errors: string[] };

/**
 * The custody-event Lambda's whole job. A malformed event, an unknown request or a refused outcome is
 * answered `rejected` rather than thrown: redelivering it could never succeed, and a thrown error makes
 * asynchronous invokers retry. Anything unexpected (DynamoDB down) still throws, so it is retried.
 */
export async function replyToCustodyEvent(ctx: AppContext, input: unknown): Promise<CustodyEventReply> {
  // Not an object at all: every field is missing, as for an empty one.
  const parsed = custodyEventMessage.safeParse(isPlainObject(input) ? input : {});
  if (!parsed.success) return { result: 'rejected', errors: formatIssues(parsed.error.issues, 'event') };
  try {
    const { outcome, withdrawal } = await applyCustodyEvent(ctx, {
      ...parsed.data,
      transaction_hash: parsed.data.transaction_hash ?? null,
    });
    return { result: outcome, withdrawal };
  } catch (error) {
    if (error instanceof ValidationError) return { result: 'rejected', errors: error.errors };
    if (error instanceof NotFoundError)
      return { result: 'rejected', errors: [`withdrawal_request_id: ${error.message}`] };
    throw error;
  }
}
