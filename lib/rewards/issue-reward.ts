import { NO_REQUEST_CLAIM, type RequestClaim } from '../store/windows.js';
import { ValidationError } from '../domain/errors.js';
import { DEFAULT_ACCOUNT_LABEL } from '../domain/ledger.js';
import { ACTIVE_STATUS, participantNotActive } from '../domain/participant-status.js';
import type { AuthContext } from '../domain/caller.js';
import { validateQuoteRequest } from '../liquidity/request-quote.js';
import { getParticipantOfPlatform } from '../store/participants.js';
import type { Participant } from '../store/entities/participant.js';
import { purchaseNow, type InstantPurchaseResult } from './instant-purchase.js';
import type { AppContext } from '../context.js';

interface RewardRequest {
  underlying: string;
  quoted_currency: string;
  quantity?: string;
  total?: string;
  participant_code: string;
  account_label?: string;
}

/**
 * `POST /rewards`: buys `underlying` for one of the platform's customers, paid from the platform's account.
 * The recipient must be an approved customer of the platform (not the platform itself: a reward to oneself
 * is a purchase, which is what `/liquidity` is for); `account_label` names the customer's receiving account.
 */
export async function issueReward(
  ctx: AppContext,
  auth: AuthContext,
  request: RewardRequest,
  requestId: string,
  claim: RequestClaim = NO_REQUEST_CLAIM,
): Promise<InstantPurchaseResult> {
  const { errors, value } = validateQuoteRequest({ ...request, side: 'buy' });
  const recipientProblems = (customer: Participant | undefined): string[] => {
    if (!customer || customer.platform_code !== auth.platformCode || customer.kind !== 'customer')
      return [`participant_code: no customer '${request.participant_code}' of this platform`];
    if (customer.status !== ACTIVE_STATUS)
      return [participantNotActive('participant_code', request.participant_code, customer.status)];
    return [];
  };
  // A request that can't be priced still hears every problem at once, its recipient's too.
  if (errors.length > 0 || !value)
    throw new ValidationError([
      ...errors,
      ...recipientProblems(await getParticipantOfPlatform(ctx, auth.platformCode, request.participant_code)),
    ]);

  return purchaseNow(
    ctx,
    auth,
    {
      product: 'reward',
      movementType: 'reward',
      request: value,
      beneficiary: {
        participant_code: request.participant_code,
        account_label: request.account_label ?? DEFAULT_ACCOUNT_LABEL,
      },
      // Read with the price, in one call: its status is checked again by the booking's transaction.
      beneficiaryProblems: recipientProblems,
    },
    requestId,
    claim,
  );
}
