import { type AppContext } from '../../lib/context.js';
import { onLambda } from '../../lib/edge.js';
import { replyToBankEvent } from '../../lib/payments/apply-bank-event.js';
import { queueConsumer } from '../../lib/queue/queue-consumer.js';

/**
 * Not an API route: consumes the bank events queue (SQS FIFO), one message `{ transaction_id, status }` per
 * payment status change the bank reports, grouped by `transaction_id`. Redeliveries are no-ops; refused
 * events (illegal moves, unknown payments) are logged and dropped.
 */
export const bind = (ctx: AppContext) => queueConsumer(ctx, 'bank event', (body) => replyToBankEvent(ctx, body));

export const handler = onLambda(bind);
