import { onLambda, type AppContext } from '../../lib/context.js';
import { replyToBankEvent } from '../../lib/payments/apply-bank-event.js';

/**
 * Not an API route: the bank integration invokes this with `{ transaction_id, status }` for every payment
 * status change it learns of. Redeliveries are no-ops and illegal moves come back `rejected`.
 */
export const bind =
  (ctx: AppContext) =>
  (event: unknown) =>
    replyToBankEvent(ctx, event);

export const handler = onLambda(bind);
