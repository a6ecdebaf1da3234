import { randomUUID } from 'node:crypto';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { IndexLag } from '../../infra/local/index-lag.js';
import { CATCH_UP_OVERLAP_MS, eventItem, markEventDispatched } from '../../lib/store/events.js';
import { eventEntity, eventIdOfKey } from '../../lib/store/entities/event.js';
import { transactWrite } from '../../lib/store/table/transactions.js';
import { ctx } from '../support/context.js';
import { listEvents as listAllEvents } from '../support/events.js';
import { newPlatform, type TestPlatform } from '../support/service.js';

/**
 * Index reads are eventually consistent on AWS; infra/local/index-lag.ts makes them so locally. Here the lag
 * runs on a clock of the test's own, so what is visible when is decided by the test, not by timing: an item
 * created while `lagging` is on stays out of index reads until the test moves that clock past it.
 */
let lagClockMs = 0;
let lagging = false;
const LAG_MS = 10_000;
const lag = new IndexLag({ lagOf: () => (lagging ? LAG_MS : 0), nowMs: () => lagClockMs }).attach(ctx.db);
// The context is shared with the worker's later files (vitest.config.ts, "parallel").
afterAll(() => lag.detach(ctx.db));

/** The platform's `webhook.test` events by GET /events (walked to the end), whatever else it has. */
async function listEvents(platform: TestPlatform, query = '') {
  return (await listAllEvents(platform, query)).filter((event) => event.type === 'webhook.test');
}

async function withLag<T>(write: () => Promise<T>): Promise<T> {
  lagging = true;
  try {
    return await write();
  } finally {
    lagging = false;
  }
}

/** One `webhook.test` event of the platform, written as the service writes events (its own transaction). */
async function recordEvent(platform: TestPlatform): Promise<string> {
  const tagged = eventItem(
    ctx,
    {
      type: 'webhook.test',
      platformCode: platform.platformCode,
      resource: { type: 'webhook_endpoint', id: randomUUID() },
      sequence: 1,
      data: { message: 'index lag' },
    },
    ctx.clock.nowMs(),
  );
  await transactWrite(ctx, [tagged]);
  return eventIdOfKey(tagged.item.Put!.Item!.pk);
}

describe('the index lag middleware', () => {
  it('keeps a new item out of index reads until its lag has passed (the table reads it at once), not a later write of it', async () => {
    const platform = await newPlatform();
    const heldBefore = lag.heldBack;
    const id = await withLag(() => recordEvent(platform));
    const byIndex = () =>
      ctx.db.send(
        new QueryCommand({
          TableName: ctx.tables.main,
          IndexName: 'gsi2',
          KeyConditionExpression: 'gsi2pk = :pk',
          ExpressionAttributeValues: {
            ':pk': eventEntity.indexPartition('gsi2', {
              platform_code: platform.platformCode,
              event_type: 'webhook.test',
            }),
          },
          // A projection without the key: the middleware still tells the item apart, and hands back only this.
          ProjectionExpression: 'resource_id',
        }),
      );
    const first = await byIndex();
    expect(first.Items).toEqual([]);
    expect(lag.heldBack).toBe(heldBefore + 1);
    const table = await ctx.db.send(
      new GetCommand({ TableName: ctx.tables.main, Key: eventEntity.key({ event_id: id }), ConsistentRead: true }),
    );
    expect(table.Item).toBeDefined();
    lagClockMs += LAG_MS;
    const shown = await byIndex();
    expect(shown.Items).toHaveLength(1);
    expect(Object.keys(shown.Items![0]!)).toEqual(['resource_id']);
    expect(shown.Count).toBe(1);
    // A later write of the item is no creation: the item stays listed (AWS would list its previous version).
    await withLag(() => markEventDispatched(ctx, id));
    expect((await byIndex()).Items).toHaveLength(1);
  });
});

describe('GET /events?created_after= catching up', () => {
  it('lists an event that showed after a later one, though the consumer already saw the later one', async () => {
    const platform = await newPlatform();
    // Event A is written first but shows in the index late; B, written a second later, shows at once.
    const early = await withLag(() => recordEvent(platform));
    ctx.clock.advance(1_000);
    const late = await recordEvent(platform);

    // The consumer reads what is visible: B only. It applies B and remembers B's created_at.
    const applied = new Map((await listEvents(platform)).map((event) => [event.id, event]));
    expect([...applied.keys()]).toEqual([late]);
    const lastSeen = Math.max(...[...applied.values()].map((event) => event.created_at));

    // A shows now. The documented catch-up from the last created_at seen finds it, and B again, which the
    // consumer skips by id.
    lagClockMs += LAG_MS;
    const caughtUp = await listEvents(platform, `&created_after=${lastSeen}`);
    expect(caughtUp.map((event) => event.id)).toEqual([early, late]);
    const fresh = caughtUp.filter((event) => !applied.has(event.id));
    expect(fresh.map((event) => event.id)).toEqual([early]);
    expect(fresh[0]!.created_at).toBeLessThan(lastSeen);
  });

  it('overlaps by CATCH_UP_OVERLAP_MS and no more: events older than that before created_after are not listed', async () => {
    const platform = await newPlatform();
    const old = await recordEvent(platform);
    ctx.clock.advance(CATCH_UP_OVERLAP_MS + 1_000);
    const recent = await recordEvent(platform);
    const all = await listEvents(platform);
    expect(all.map((event) => event.id)).toEqual([old, recent]);
    const createdAfter = all[1]!.created_at;
    expect((await listEvents(platform, `&created_after=${createdAfter}`)).map((event) => event.id)).toEqual([recent]);
    // Exactly at the window's edge: `created_after` less the overlap is still excluded, a millisecond later is not.
    const edge = all[0]!.created_at + CATCH_UP_OVERLAP_MS;
    expect((await listEvents(platform, `&created_after=${edge}`)).map((event) => event.id)).toEqual([recent]);
    expect((await listEvents(platform, `&created_after=${edge - 1}`)).map((event) => event.id)).toEqual([old, recent]);
  });
});
