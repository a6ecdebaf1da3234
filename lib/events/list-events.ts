import type { AppContext } from '../context.js';
import { ValidationError } from '../domain/errors.js';
import { isEventType, type EventType } from '../domain/events.js';
import type { AuthContext } from '../domain/caller.js';
import { requireEventTypes, seesEveryEventType, visibleEventTypes } from './visibility.js';
import { listEnvelope } from '../domain/list-envelope.js';
import { CATCH_UP_OVERLAP_MS, eventsIndex, storedEventFrom } from '../store/events.js';
import { pageWithCount } from '../store/table/paging.js';

/** How far before `created_after` the list starts (the parameter's description states it). */
export { CATCH_UP_OVERLAP_MS };

interface EventListQuery {
  type?: string;
  resource_id?: string;
  /** UNIX milliseconds: a catch-up from there, overlapping it (`CATCH_UP_OVERLAP_MS`). */
  created_after?: string;
  page: number;
  page_size: number;
  cursor?: string;
}

/**
 * GET /events: the platform's events of the last 30 days, oldest first, so a consumer back from downtime
 * walks forward from where it stopped with `next_cursor` (or from `created_after`). An event can show in the
 * list after later ones (its transaction committed later, and the index is eventually consistent), so a read
 * from `created_after` starts `CATCH_UP_OVERLAP_MS` before it: a catch-up from the last `created_at` seen
 * lists again what it may have missed, and the consumer skips ids it has applied.
 */
export async function listEvents(
  ctx: AppContext,
  caller: Pick<AuthContext, 'platformCode' | 'permissions'>,
  query: EventListQuery,
) {
  const { platformCode, permissions } = caller;
  const problems: string[] = [];
  if (query.type !== undefined && !isEventType(query.type))
    problems.push(`type: unknown event type ${JSON.stringify(query.type)}`);
  if (query.created_after !== undefined && !/^\d{1,15}$/.test(query.created_after))
    problems.push('created_after: must be UNIX milliseconds');
  if (problems.length) throw new ValidationError(problems);
  // A key sees the events of the areas it holds (an event's data is the resource its area's routes show).
  if (query.type !== undefined) requireEventTypes(permissions, [query.type as EventType]);
  const filters = {
    type: query.type as EventType | undefined,
    types: seesEveryEventType(permissions) ? undefined : visibleEventTypes(permissions),
    resourceId: query.resource_id,
    createdAfterMs: query.created_after !== undefined ? Number(query.created_after) : undefined,
  };
  const page = await pageWithCount(
    ctx,
    eventsIndex(ctx, platformCode, filters),
    { page: query.page, pageSize: query.page_size, cursor: query.cursor },
    {
      list: 'events',
      platformCode,
      filters: {
        type: query.type,
        resource_id: query.resource_id,
        created_after: query.created_after,
        // A cursor is bound to what the key that asked may see.
        types: filters.types?.join(','),
      },
    },
  );
  return listEnvelope(
    page.items.map((item) => storedEventFrom(item).envelope),
    { page: page.page, pageSize: query.page_size, count: page.count, nextCursor: page.nextCursor },
  );
}
