import { NO_REQUEST_CLAIM, type RequestClaim } from '../store/windows.js';
import { ValidationError } from '../domain/errors.js';
import type { AuthContext } from '../domain/caller.js';
import { validateQuoteRequest } from '../liquidity/request-quote.js';
import { purchaseNow, type InstantPurchaseResult } from '../rewards/instant-purchase.js';
import { AWARDS_ACCOUNT_LABEL } from './distribute-awards.js';
import type { AppContext } from '../context.js';

interface FundRequest {
  underlying?: string;
  /** The spec's sample code sends `asset` for `underlying`; it is accepted as an alias. */
  asset?: string;
  quoted_currency: string;
  quantity?: string;
  total?: string;
}

/** The underlying named by either field; naming two different assets is a mistake worth reporting. */
function underlyingOf(request: FundRequest, errors: string[]): string {
  const { underlying, asset } = request;
  if (underlying === undefined && asset === undefined) errors.push('underlying: is required (or its alias asset)');
  else if (underlying !== undefined && asset !== undefined && underlying !== asset) {
    errors.push(`underlying: '${underlying}' differs from its alias asset '${asset}'; send one of them`);
  }
  return underlying ?? asset ?? '';
}

/**
 * `POST /awards/fund`: buys the asset to be awarded into the platform's `awards` account (the pool
 * `POST /awards/distribute` pays from), paid from the platform's `general` account.
 */
export async function fundAwards(
  ctx: AppContext,
  auth: AuthContext,
  request: FundRequest,
  requestId: string,
  claim: RequestClaim = NO_REQUEST_CLAIM,
): Promise<InstantPurchaseResult> {
  const errors: string[] = [];
  const underlying = underlyingOf(request, errors);
  const checked = validateQuoteRequest({ ...request, underlying, side: 'buy' });
  // Without a usable underlying the generic check adds its own "unknown asset" line; the alias message says it better.
  errors.push(
    ...(errors.length > 0 ? checked.errors.filter((error) => !error.startsWith('underlying:')) : checked.errors),
  );
  const value = checked.value;
  if (errors.length > 0 || !value) throw new ValidationError(errors);
  return purchaseNow(
    ctx,
    auth,
    {
      product: 'award_fund',
      movementType: 'award_fund',
      request: value,
      beneficiary: { participant_code: auth.participantCode, account_label: AWARDS_ACCOUNT_LABEL },
    },
    requestId,
    claim,
  );
}
