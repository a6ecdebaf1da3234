import { onLambda } from '../../lib/edge.js';
import { bindDeliveryWorker } from '../../lib/webhooks/handlers.js';
import { queueFor } from '../../lib/webhooks/sqs-edge.js';

/** Not an API route: the delivery queue invokes it; one attempt per message. */
export const bind = (ctx: Parameters<typeof bindDeliveryWorker>[0]) =>
  bindDeliveryWorker(ctx, { queue: queueFor(ctx) });

export const handler = onLambda(bind);
