import { onLambda, type AppContext } from '../../lib/context.js';
import { replyToCustodyEvent } from '../../lib/withdrawals/apply-custody-event.js';

/**
 * Not an API route: the custody integration invokes this with `{ withdrawal_request_id, status:
 * CONFIRMED|FAILED, transaction_hash? }` for every outcome it learns of. Redeliveries are no-ops and
 * refused outcomes come back `rejected`.
 */
export const bind =
  (ctx: AppContext) =>
  (event: unknown) =>
    replyToCustodyEvent(ctx, event);

export const handler = onLambda(bind);
