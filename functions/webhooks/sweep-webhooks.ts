import { onLambda } from '../../lib/edge.js';
import { bindWebhookSweep } from '../../lib/webhooks/handlers.js';
import { queueFor } from '../../lib/webhooks/sqs-edge.js';

/** Not an API route: a schedule invokes it every minute; it dispatches missed events and queues due retries. */
export const bind = (ctx: Parameters<typeof bindWebhookSweep>[0]) => bindWebhookSweep(ctx, queueFor(ctx));

export const handler = onLambda(bind);
