import { onLambda } from '../../lib/edge.js';
import { bindDispatcher } from '../../lib/webhooks/handlers.js';
import { queueFor } from '../../lib/webhooks/sqs-edge.js';

/** Not an API route: the table's stream (filtered to event inserts) invokes it; it fans events out into deliveries. */
export const bind = (ctx: Parameters<typeof bindDispatcher>[0]) => bindDispatcher(ctx, queueFor(ctx));

export const handler = onLambda(bind);
