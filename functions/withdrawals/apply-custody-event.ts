import { type AppContext } from '../../lib/context.js';
import { onLambda } from '../../lib/edge.js';
import { queueConsumer } from '../../lib/queue/queue-consumer.js';
import { replyToCustodyEvent } from '../../lib/withdrawals/apply-custody-event.js';

/**
 * Not an API route: consumes the custody events queue (SQS FIFO), one message `{ withdrawal_request_id,
 * status: CONFIRMED|FAILED, transaction_hash? }` per outcome the custodian reports, grouped by
 * `withdrawal_request_id`. Redeliveries are no-ops; refused outcomes are logged and dropped.
 */
export const bind = (ctx: AppContext) => queueConsumer(ctx, 'custody event', (body) => replyToCustodyEvent(ctx, body));

export const handler = onLambda(bind);
