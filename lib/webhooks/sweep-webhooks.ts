import type { AppContext } from '../context.js';
import { getEvent } from '../store/events.js';
import { dueWork } from '../store/webhook-deliveries.js';
import { dispatch } from './dispatch-events.js';
import type { DeliveryMessage, DeliveryQueue } from './queue.js';

/** Items taken per due-index shard per round. */
const SWEEP_LIMIT_PER_SHARD = 100;
/** A run stops starting rounds after this, well inside the function's timeout; the next run goes on. */
const SWEEP_BUDGET_MS = 60_000;
const SWEEP_PARALLEL_EVENTS = 16;

/**
 * The scheduled sweep: dispatches every event the stream did not (a dispatcher that
 * failed past its retries, a local process that died between the commit and the poll) and queues every
 * delivery whose next step is due (a retry beyond the queue's 15-minute delay, a queued message that was
 * lost, a worker that died holding its claim). Dispatched events leave the due index, so rounds go on while
 * a backlog of events remains; deliveries stay in it until a worker claims them, so each is queued once per
 * run. Everything it touches is conditional, so racing the stream or a worker is harmless.
 */
export async function sweepWebhooks(
  ctx: AppContext,
  queue: DeliveryQueue,
): Promise<{ events: number; deliveries: number }> {
  const started = Date.now();
  const deliveries = new Map<string, DeliveryMessage>();
  let events = 0;
  for (;;) {
    const work = await dueWork(ctx, ctx.clock.nowMs(), SWEEP_LIMIT_PER_SHARD);
    let dispatched = 0;
    const eventIds: string[] = [];
    for (const item of work) {
      if (item.kind === 'delivery')
        deliveries.set(`${item.eventId}#${item.endpointId}`, { eventId: item.eventId, endpointId: item.endpointId });
      else eventIds.push(item.eventId);
    }
    // A few at a time: a backlog is drained quickly without a burst of hundreds of calls at once.
    for (let start = 0; start < eventIds.length; start += SWEEP_PARALLEL_EVENTS) {
      const results = await Promise.all(
        eventIds.slice(start, start + SWEEP_PARALLEL_EVENTS).map(async (eventId) => {
          const event = await getEvent(ctx, null, eventId);
          if (!event || event.dispatched) return 0;
          await dispatch(ctx, queue, {
            eventId,
            platformCode: event.envelope.platform_code,
            eventType: event.envelope.type,
            redelivery: false,
            onlyEndpointId: event.onlyEndpointId,
          });
          return 1;
        }),
      );
      dispatched += results.reduce<number>((sum, n) => sum + n, 0);
    }
    events += dispatched;
    if (dispatched === 0 || Date.now() - started > SWEEP_BUDGET_MS) break;
  }
  if (deliveries.size) await queue.send([...deliveries.values()]);
  return { events, deliveries: deliveries.size };
}
