import { randomUUID } from 'node:crypto';
import { BatchWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { AccountRef } from '../../lib/domain/ledger.js';
import { Money } from '../../lib/domain/money.js';
import { counterUpdates } from '../../lib/store/table/counters.js';
import { type CountChange } from '../../lib/store/table/transaction-items.js';
import { movementRecordItems } from '../../lib/store/movements.js';
import { fund } from '../support/ledger.js';
import { newPlatform, serviceFor } from '../support/service.js';
import { ctx, testContext } from '../support/context.js';

/**
 * GET /movements counts from the platform's movement counter (written in each movement's transaction), so
 * `count` and `total_pages` stay exact past the count budget that bounds lists without a counter.
 */

/** The movement records as `movementRecordItems` builds them, written in bulk, with the counts they carry. */
async function writeMovementRecords(platformCode: string, participantCode: string, count: number): Promise<void> {
  const account = (label: string): AccountRef => ({
    participant_code: participantCode,
    account_group: platformCode,
    account_label: label,
    asset: 'USD',
  });
  const counts: CountChange[] = [];
  const items: Record<string, unknown>[] = [];
  const nowMs = ctx.clock.nowMs();
  for (let index = 0; index < count; index++) {
    const [record] = movementRecordItems(
      ctx,
      {
        movement_id: randomUUID(),
        type: 'transfer',
        reference: `bulk-${index}`,
        legs: [
          { account: account('a'), platform_code: platformCode, amount: new Money(-1) },
          { account: account('b'), platform_code: platformCode, amount: new Money(1) },
        ],
      },
      nowMs - count + index,
    );
    items.push(record!.item.Put!.Item as Record<string, unknown>);
    counts.push(...(record!.counts ?? []));
  }
  const batches = Array.from({ length: Math.ceil(items.length / 25) }, (_, i) => items.slice(i * 25, i * 25 + 25));
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let batch = batches.shift(); batch; batch = batches.shift()) {
        let pending: any[] | undefined = batch.map((Item) => ({ PutRequest: { Item } }));
        while (pending && pending.length > 0) {
          const out: { UnprocessedItems?: Record<string, any[]> } = await ctx.db.send(
            new BatchWriteCommand({ RequestItems: { [ctx.tables.main]: pending } }),
          );
          pending = out.UnprocessedItems?.[ctx.tables.main];
        }
      }
    }),
  );
  for (const update of counterUpdates(ctx, counts)) await ctx.db.send(new UpdateCommand(update.Update!));
}

// A count budget of its own, small enough to pass quickly: what holds past 10,000 (the default) holds past 300.
const COUNT_BUDGET = 300;
const budgeted = serviceFor(testContext({ env: { LIST_COUNT_BUDGET: String(COUNT_BUDGET) } }));

describe('GET /movements count', () => {
  it('is exact beyond the count budget (the counter), where a filter without a counter answers null', async () => {
    const platform = await newPlatform({ on: budgeted });
    await fund(platform.participantCode, 'USD', '5');
    const total = COUNT_BUDGET + 1;
    // The records carry one count each for their platform; the real deposit above counted itself.
    await writeMovementRecords(platform.platformCode, platform.participantCode, total - 1);

    const all = await platform.get('/movements?page_size=100');
    expect(all.status, all.text).toBe(200);
    expect(all.body).toMatchObject({ count: total, total_pages: Math.ceil(total / 100) });
    expect(all.body.message).toHaveLength(100);

    // The same records filtered by type have no counter: counted within the budget, unknown past it.
    const filtered = await platform.get('/movements?page_size=100&movement_type=transfer');
    expect(filtered.status, filtered.text).toBe(200);
    expect(filtered.body).toMatchObject({ count: null, total_pages: null });
  });
});
