import type { AppContext } from '../context.js';
import { listEnvelope } from '../domain/list-envelope.js';
import { pageCountedWhenWhole } from '../store/table/paging.js';
import { attemptFrom, attemptsIndex } from '../store/webhook-deliveries.js';
import { requireEndpoint } from '../store/webhook-endpoints.js';

/**
 * GET /webhooks/endpoints/{id}/attempts: every try of the last 30 days, oldest first: the event, the status
 * code (null when no answer came), latency, error, and when it will be tried again (null: it won't).
 */
export async function listAttempts(
  ctx: AppContext,
  platformCode: string,
  endpointId: string,
  query: { page: number; page_size: number; cursor?: string },
) {
  // The endpoint's check and its attempts side by side: two calls in one round trip for an endpoint's usual
  // month of attempts (one page). Nothing is answered before the check passed, and its 404 comes first.
  const [endpoint, attempts] = await Promise.allSettled([
    requireEndpoint(ctx, platformCode, endpointId),
    pageCountedWhenWhole(
      ctx,
      attemptsIndex(ctx, endpointId),
      { page: query.page, pageSize: query.page_size, cursor: query.cursor },
      { list: 'webhook_attempts', platformCode, filters: { endpoint_id: endpointId } },
    ),
  ]);
  if (endpoint.status === 'rejected') throw endpoint.reason;
  if (attempts.status === 'rejected') throw attempts.reason;
  const page = attempts.value;
  return listEnvelope(page.items.map(attemptFrom), {
    page: page.page,
    pageSize: query.page_size,
    count: page.count,
    nextCursor: page.nextCursor,
  });
}
