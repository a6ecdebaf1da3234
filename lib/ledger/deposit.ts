import { findAsset } from '../domain/assets.js';
import { NotFoundError, ValidationError } from '../domain/errors.js';
import { accountGroupProblem, DEFAULT_ACCOUNT_LABEL, moveLegs, SYSTEM_PARTICIPANTS, systemAccount } from '../domain/ledger.js';
import { parseAmount, type Money } from '../domain/money.js';
import { newId } from '../store/codes.js';
import { bookMovement } from '../store/ledger.js';
import { getParticipant } from '../store/participants.js';

export interface DepositRequest {
  participantCode: string;
  asset: string;
  amount: string;
  accountGroup?: string;
  accountLabel?: string;
}

/**
 * Credits a participant's account from the external boundary: money arriving from outside (a wire, an
 * on-chain deposit) booked as a movement like any other, so balances still sum to zero per asset.
 */
export async function deposit(request: DepositRequest): Promise<{ movement_id: string; amount: Money }> {
  const participant = await getParticipant(request.participantCode);
  if (!participant) throw new NotFoundError(`participant not found: ${request.participantCode}`);
  const asset = findAsset(request.asset);
  if (!asset) throw new ValidationError([`asset: unknown asset '${request.asset}'`]);
  const amount = parseAmount(request.amount, asset, 'amount');
  if (typeof amount === 'string') throw new ValidationError([amount]);
  const groupProblem = request.accountGroup === undefined ? undefined : accountGroupProblem('account_group', request.accountGroup);
  if (groupProblem) throw new ValidationError([groupProblem]);

  const movementId = newId();
  await bookMovement({
    movement_id: movementId,
    type: 'deposit',
    reference: `deposit:${movementId}`,
    legs: moveLegs(
      { account: systemAccount(SYSTEM_PARTICIPANTS.externalBoundary, 'deposits', asset.symbol), platform_code: null },
      {
        account: {
          participant_code: participant.participant_code,
          account_group: request.accountGroup ?? participant.platform_code,
          account_label: request.accountLabel ?? DEFAULT_ACCOUNT_LABEL,
          asset: asset.symbol,
        },
        platform_code: participant.platform_code,
      },
      amount,
    ),
  });
  return { movement_id: movementId, amount };
}
