import { randomUUID } from 'node:crypto';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { distributeAwards } from '../../lib/awards/distribute-awards.js';
import { CHUNK_FIXED_ITEMS, CHUNK_ITEMS_PER_RECIPIENT, recipientsPerChunk } from '../../lib/domain/awards.js';
import { accountIdOf, type AccountRef } from '../../lib/domain/ledger.js';
import { Money } from '../../lib/domain/money.js';
import { movementRecordItems } from '../../lib/store/movements.js';
import { PAGE_READ_BUDGET } from '../../lib/store/table/paging.js';
import { MAX_TRANSACTION_ITEMS } from '../../lib/store/table/transaction-items.js';
import { customersViaHttp, customersViaStore } from '../support/customers.js';
import { fund } from '../support/ledger.js';
import { setPrice } from '../support/pricing.js';
import { newPlatform, type TestPlatform } from '../support/service.js';
import { clientWith, ctx } from '../support/context.js';

/**
 * GET /accounts/{account_id}/movements reads the account's own index entries (one per platform or customer
 * account a movement changes, written in the movement's transaction) and counts from the account's stored
 * movement count: full pages and an exact count whatever the rest of the platform holds.
 */

// Prices are shared by the run's files: SOL/EUR at the price rewards.test.ts sets (DOGE/EUR must stay
// unpriced: liquidity.test.ts asserts it has no price).
beforeAll(async () => {
  await setPrice('SOL', 'EUR', '125');
});

async function walk(platform: TestPlatform, path: string): Promise<{ items: any[]; pages: number[] }> {
  const items: any[] = [];
  const pages: number[] = [];
  let cursor: string | null = null;
  do {
    const response: { status: number; text: string; body: any } = await platform.get(
      cursor === null ? path : `${path}${path.includes('?') ? '&' : '?'}cursor=${encodeURIComponent(cursor)}`,
    );
    expect(response.status, response.text).toBe(200);
    items.push(...response.body.message);
    pages.push(response.body.message.length);
    cursor = response.body.next_cursor;
  } while (cursor !== null);
  return { items, pages };
}

const generalAccount = (platform: TestPlatform, participant: string, asset: string) =>
  accountIdOf({ participant_code: participant, account_group: platform.platformCode, account_label: 'general', asset });

/** Movement records as bookings write them (the platform's list entries), between two platform accounts. */
async function busyPlatformRecords(platform: TestPlatform, count: number, fromMs: number): Promise<void> {
  const account = (label: string): AccountRef => ({
    participant_code: platform.participantCode,
    account_group: platform.platformCode,
    account_label: label,
    asset: 'USD',
  });
  const items = Array.from({ length: count }, (_, index) => {
    const [record] = movementRecordItems(
      ctx,
      {
        movement_id: randomUUID(),
        type: 'transfer',
        reference: `busy-${index}`,
        legs: [
          { account: account('x'), platform_code: platform.platformCode, amount: new Money(-1) },
          { account: account('y'), platform_code: platform.platformCode, amount: new Money(1) },
        ],
      },
      fromMs + index,
    );
    return record!.item.Put!.Item as Record<string, unknown>;
  });
  for (let start = 0; start < items.length; start += 25) {
    let pending: any[] | undefined = items.slice(start, start + 25).map((Item) => ({ PutRequest: { Item } }));
    while (pending && pending.length > 0) {
      const out: { UnprocessedItems?: Record<string, any[]> } = await ctx.db.send(
        new BatchWriteCommand({ RequestItems: { [ctx.tables.main]: pending } }),
      );
      pending = out.UnprocessedItems?.[ctx.tables.main];
    }
  }
}

describe('GET /accounts/{account_id}/movements on its own index', () => {
  it('a quiet account on a platform with more movements than the read budget gets full pages and an exact count', {
    timeout: 120_000,
  }, async () => {
    const platform = await newPlatform();
    const [quiet] = await customersViaHttp(platform, 1);
    await fund(quiet!, 'USD', '10');
    for (const amount of ['1.00', '2.00', '3.00']) {
      const sent = await platform.post('/transfers', {
        from_participant_code: quiet,
        to_participant_code: platform.participantCode,
        asset: 'USD',
        amount,
      });
      expect(sent.status, sent.text).toBe(201);
    }
    // Newer than the quiet account's: the platform's list holds them first, past the page read budget.
    await busyPlatformRecords(platform, PAGE_READ_BUDGET + 100, ctx.clock.nowMs() + 1000);

    const account = generalAccount(platform, quiet!, 'USD');
    const first = await platform.get(`/accounts/${account}/movements?page_size=2`);
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ count: 4, total_pages: 2 });
    expect(first.body.message.map((m: any) => m.change)).toEqual(['-3.00', '-2.00']);
    expect(first.body.next_cursor).not.toBeNull();
    const { items, pages } = await walk(platform, `/accounts/${account}/movements?page_size=2`);
    expect(pages).toEqual([2, 2]);
    expect(items.map((m: any) => [m.movement_type, m.change])).toEqual([
      ['transfer', '-3.00'],
      ['transfer', '-2.00'],
      ['transfer', '-1.00'],
      ['deposit', '10.00'],
    ]);
    // Filters narrow the account's own entries: counted within the budget (exact here), pages still full.
    const deposits = await platform.get(`/accounts/${account}/movements?movement_type=deposit`);
    expect(deposits.body).toMatchObject({ count: 1, next_cursor: null });
    expect(deposits.body.message).toHaveLength(1);
  });

  it('concurrent cursor walks during concurrent bookings see every earlier movement exactly once, and counts equal full walks', {
    timeout: 120_000,
  }, async () => {
    const platform = await newPlatform();
    const customers = await customersViaHttp(platform, 3);
    await Promise.all(customers.map((code) => fund(code, 'USD', '100')));
    const transfer = (from: string, to: string) =>
      platform.post('/transfers', {
        from_participant_code: from,
        to_participant_code: to,
        asset: 'USD',
        amount: '1.00',
      });
    // 3 deposits + 12 transfers around the ring: each account is in 1 + 8 movements.
    const before = await Promise.all(
      Array.from({ length: 12 }, (_, i) => transfer(customers[i % 3]!, customers[(i + 1) % 3]!)),
    );
    expect(before.every((response) => response.status === 201)).toBe(true);
    const accounts = customers.map((code) => generalAccount(platform, code, 'USD'));
    const expected = await Promise.all(
      accounts.map(async (account) =>
        (await walk(platform, `/accounts/${account}/movements?page_size=100`)).items.map((m: any) => m.movement_id),
      ),
    );
    expect(expected.map((ids) => ids.length)).toEqual([9, 9, 9]);

    // Walks of every account (three each, page size 2) while more transfers book: each walk sees what
    // existed when it started exactly once, in order, and what books meanwhile at most once.
    const [walks, during] = await Promise.all([
      Promise.all(
        accounts.flatMap((account) =>
          [1, 2, 3].map(() => walk(platform, `/accounts/${account}/movements?page_size=2`)),
        ),
      ),
      Promise.all(Array.from({ length: 9 }, (_, i) => transfer(customers[i % 3]!, customers[(i + 2) % 3]!))),
    ]);
    expect(during.every((response) => response.status === 201)).toBe(true);
    walks.forEach(({ items }, index) => {
      const ids = items.map((m: any) => m.movement_id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.slice(ids.length - expected[Math.floor(index / 3)]!.length)).toEqual(expected[Math.floor(index / 3)]);
      const times = items.map((m: any) => m.movement_timestamp);
      expect([...times].sort((a, b) => b - a)).toEqual(times);
    });
    // After the bookings: each account's count is what a full walk finds (9 + 6 each).
    for (const account of accounts) {
      const all = (await walk(platform, `/accounts/${account}/movements?page_size=4`)).items;
      expect(all).toHaveLength(15);
      const counted = await platform.get(`/accounts/${account}/movements?page_size=4`);
      expect(counted.body).toMatchObject({ count: 15, total_pages: 4 });
    }
  });
});

describe('every booking kind writes the per-account entries', () => {
  it('deposits, transfers, RFQ executions, rewards, award funding and distribution: each platform account change has its entry and count', {
    timeout: 120_000,
  }, async () => {
    const platform = await newPlatform();
    const [alice, bob] = await customersViaHttp(platform, 2);
    await fund(platform.participantCode, 'EUR', '1000');
    await fund(alice!, 'EUR', '100');
    expect(
      (
        await platform.post('/transfers', {
          from_participant_code: alice,
          to_participant_code: bob,
          asset: 'EUR',
          amount: '5.00',
        })
      ).status,
    ).toBe(201);
    const quote = await platform.get(
      `/liquidity/rfq?side=buy&underlying=SOL&quoted_currency=EUR&total=10&participant_code=${alice}`,
    );
    expect(quote.status, quote.text).toBe(200);
    const executed = await platform.post('/liquidity/execute', { quote_id: quote.body.message.quote_id });
    expect(executed.status, executed.text).toBe(200);
    const rewarded = await platform.post('/rewards', {
      underlying: 'SOL',
      quoted_currency: 'EUR',
      quantity: '1',
      participant_code: bob,
    });
    expect(rewarded.status, rewarded.text).toBe(201);
    const funded = await platform.post('/awards/fund', { underlying: 'SOL', quoted_currency: 'EUR', quantity: '2' });
    expect(funded.status, funded.text).toBe(201);
    const distributed = await platform.post('/awards/distribute', {
      asset: 'SOL',
      quantity: '0.5',
      participant_codes: [alice, bob],
      quoted_currency: 'EUR',
    });
    expect(distributed.status, distributed.text).toBe(201);

    // Every change on the platform's list has its entry on the changed account's list, with the same change.
    const movements = (await walk(platform, '/movements?page_size=50')).items;
    const perAccount = new Map<string, number>();
    for (const movement of movements) {
      for (const change of movement.changes) {
        const listed = (await walk(platform, `/accounts/${change.account_id}/movements?page_size=100`)).items;
        expect(
          listed.find((entry: any) => entry.movement_id === movement.movement_id),
          `${movement.movement_type} on ${change.account_id}`,
        ).toMatchObject({
          movement_type: movement.movement_type,
          change: change.change,
        });
        perAccount.set(change.account_id, (perAccount.get(change.account_id) ?? 0) + 1);
      }
    }
    // Each account lists exactly its changes, and counts them.
    for (const [accountId, changes] of perAccount) {
      const page = await platform.get(`/accounts/${accountId}/movements?page_size=100`);
      expect(page.body.message).toHaveLength(changes);
      expect(page.body.count).toBe(changes);
    }
    const kinds = new Set(movements.map((m: any) => m.movement_type));
    expect(kinds.size, [...kinds].join(', ')).toBeGreaterThanOrEqual(6);
    // Alice: deposit, transfer, RFQ execution, award; Bob: transfer, reward, award.
    expect((await platform.get(`/accounts/${generalAccount(platform, alice!, 'SOL')}/movements`)).body.count).toBe(2);
    expect((await platform.get(`/accounts/${generalAccount(platform, bob!, 'SOL')}/movements`)).body.count).toBe(2);
  });
});

describe('award chunk transactions', () => {
  it("a full chunk of recipients with new accounts fits DynamoDB's 100 items, as recipientsPerChunk computes", {
    timeout: 120_000,
  }, async () => {
    const size = recipientsPerChunk(MAX_TRANSACTION_ITEMS);
    expect(CHUNK_FIXED_ITEMS + size * CHUNK_ITEMS_PER_RECIPIENT).toBeLessThanOrEqual(MAX_TRANSACTION_ITEMS);
    const platform = await newPlatform();
    const customers = await customersViaStore(platform.platformCode, size);
    await fund(platform.participantCode, 'DOGE', '100', 'awards');
    const sizes: number[] = [];
    const counting = clientWith(
      (next: any) => async (args: any) => {
        if (Array.isArray(args.input?.TransactItems)) sizes.push(args.input.TransactItems.length);
        return next(args);
      },
      'count-transaction-items',
      'initialize',
    );
    const auth = {
      platformCode: platform.platformCode,
      participantCode: platform.participantCode,
      apiKey: 'test',
      permissions: [],
    };
    const result = await distributeAwards(
      { ...ctx, db: counting },
      auth,
      { asset: 'DOGE', quantity: '1', participant_codes: customers },
      randomUUID(),
    );
    expect(result.confirms).toHaveLength(size);
    // The chunk's transaction is the largest: every recipient new (counted as opened), each with its entry.
    const largest = Math.max(...sizes);
    expect(largest).toBeLessThanOrEqual(MAX_TRANSACTION_ITEMS);
    expect(largest).toBeGreaterThan(MAX_TRANSACTION_ITEMS - CHUNK_ITEMS_PER_RECIPIENT - CHUNK_FIXED_ITEMS);
  });
});
