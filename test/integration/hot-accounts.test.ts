import { randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { runAdmin } from '../../infra/ops/cli.js';
import { BookingQueuedError } from '../../lib/domain/errors.js';
import { accountIdOf, accountKey, type AccountRef } from '../../lib/domain/ledger.js';
import { Money } from '../../lib/domain/money.js';
import { bookingLeaseEntity } from '../../lib/store/entities/booking-queue.js';
import { accountEntity } from '../../lib/store/entities/ledger.js';
import { ctx, testContext } from '../support/context.js';
import { customersViaHttp } from '../support/customers.js';
import { listEvents } from '../support/events.js';
import { serviceWith } from '../support/faults.js';
import { balances, fund, generalOf, hotWithStalledCommitter, queuedEntries } from '../support/ledger.js';
import { newPlatform, serviceFor, type TestPlatform } from '../support/service.js';
import { byProfile } from '../support/profile.js';

/**
 * Group commit (lib/store/README.md, "Hot accounts"): a platform's own account taking many concurrent
 * bookings answers every one of them, with the same answers and events as if they were booked one by one.
 */

const payout = (platform: TestPlatform, index: number, amount = '1') => ({
  from_participant_code: platform.participantCode,
  from_account_group: platform.platformCode,
  from_account_label: 'general',
  to_participant_code: platform.participantCode,
  to_account_group: platform.platformCode,
  to_account_label: `payee-${index}`,
  asset: 'USD',
  amount,
});

/** The account's `account_balance.changed` events in sequence order, each checked against the one before. */
async function balanceHistory(platform: TestPlatform, label: string) {
  const accountId = accountIdOf({
    participant_code: platform.participantCode,
    account_group: platform.platformCode,
    account_label: label,
    asset: 'USD',
  });
  const events = (await listEvents(platform, `&type=account_balance.changed&resource_id=${accountId}`)).sort(
    (a, b) => a.sequence - b.sequence,
  );
  let previous = new Money(0);
  for (const [index, event] of events.entries()) {
    expect(event.sequence, 'consecutive sequences').toBe(index + 1);
    const data = event.data as { balance: string; movement: { change: string } };
    expect(new Money(data.balance).toFixed(), `event ${event.sequence}: previous + change`).toBe(
      previous.plus(data.movement.change).toFixed(),
    );
    previous = new Money(data.balance);
  }
  return { events, last: previous };
}

describe('a hot account', () => {
  it('160 concurrent debits of an account funded for 100: exactly 100 book, 60 get 400, none 503; 101 consecutive events', {
    timeout: 120_000,
  }, async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '100');
    const results = await Promise.all(
      Array.from({ length: 160 }, (_, i) => platform.post('/transfers', payout(platform, i))),
    );
    const statuses = results.map((response) => response.status);
    expect(
      statuses.filter((status) => status >= 500),
      results.find((r) => r.status >= 500)?.text,
    ).toEqual([]);
    expect(statuses.filter((status) => status === 201)).toHaveLength(100);
    expect(statuses.filter((status) => status === 400)).toHaveLength(60);
    for (const refused of results.filter((response) => response.status === 400)) {
      expect(refused.body.errors).toEqual([
        `${platform.participantCode}/${platform.platformCode}/general: insufficient USD balance for 1`,
      ]);
    }
    const after = {
      ...(await balances(platform, '?page_size=100')),
      ...(await balances(platform, '?page_size=100&page=2')),
    };
    expect(after[`${platform.participantCode}/general/USD`]).toBe('0.00');
    const credited = results.flatMap((response, i) =>
      response.status === 201 ? [`${platform.participantCode}/payee-${i}/USD`] : [],
    );
    expect(
      Object.keys(after)
        .filter((key) => key.includes('/payee-'))
        .sort(),
    ).toEqual(credited.sort());
    for (const key of credited) expect(after[key]).toBe('1.00');

    const { events, last } = await balanceHistory(platform, 'general');
    expect(events).toHaveLength(101);
    expect(last.toFixed()).toBe('0');
    // Each booked transfer's event names its own movement, once.
    const transfers = results
      .filter((response) => response.status === 201)
      .map((response) => response.body.message.movement_id as string);
    const movements = events
      .slice(1)
      .map((event) => (event.data as { movement: { movement_id: string } }).movement.movement_id);
    expect(new Set(movements).size).toBe(100);
    expect(transfers.every((id) => typeof id === 'string')).toBe(true);
    expect(new Set(movements)).toEqual(new Set(transfers));
    const report = (await runAdmin(['ledger', 'check', '--platform', platform.platformCode], { ctx })) as {
      clean: boolean;
      discrepancies: unknown[];
    };
    expect(report.discrepancies).toEqual([]);
    expect(report.clean).toBe(true);
  });
});

/** The stalled committer's lease lapses (deleted, as its expiry would): the next booking of the account commits the queue. */
async function committerGone(account: AccountRef): Promise<void> {
  await ctx.db.send(
    new DeleteCommand({
      TableName: ctx.tables.main,
      Key: bookingLeaseEntity.key({ account_key: accountKey(account) }),
    }),
  );
}

/** A server whose requests wait at most 300 ms for their queued bookings. */
const impatient = serviceFor(testContext({ env: { HOT_ACCOUNT_WAIT_MS: '300' } }));

/**
 * A platform funded with `funds` whose payout of `amount` (to payee-1) is left queued behind a stalled committer:
 * its request (through the impatient server) answered 503, its id still in progress.
 */
async function payoutLeftQueued(funds: string, amount = '1') {
  const platform = await newPlatform();
  await fund(platform.participantCode, 'USD', funds);
  const general = generalOf(platform);
  await hotWithStalledCommitter(general);
  const requestId = randomUUID();
  const first = await platform.post('/transfers', payout(platform, 1, amount), {
    headers: { 'X-Request-Id': requestId },
    via: impatient,
  });
  expect(first.status, first.text).toBe(503);
  return { platform, general, requestId, first };
}

describe('a request that waits past its bound', () => {
  it('answers 503 with Retry-After; its booking still commits once, and a retry with the same X-Request-Id gets its answer', async () => {
    const { platform, general, requestId, first } = await payoutLeftQueued('10');
    expect(first.headers.get('retry-after')).toBe('1');
    // The booking is still queued, its committer stalled: a retry waits its turn, then hears it is queued.
    const meanwhile = await platform.post('/transfers', payout(platform, 1), {
      headers: { 'X-Request-Id': requestId },
      via: impatient,
    });
    expect(meanwhile.status, meanwhile.text).toBe(503);
    expect(meanwhile.headers.get('retry-after')).toBe('1');
    expect(meanwhile.body.errors).toEqual([new BookingQueuedError().message]);

    await committerGone(general);
    const next = await platform.post('/transfers', payout(platform, 2));
    expect(next.status, next.text).toBe(201);
    const retry = await platform.post('/transfers', payout(platform, 1), { headers: { 'X-Request-Id': requestId } });
    expect(retry.status, retry.text).toBe(201);
    expect(retry.body.message.to_account_label).toBe('payee-1');
    const after = await balances(platform);
    expect([
      after[`${platform.participantCode}/general/USD`],
      after[`${platform.participantCode}/payee-1/USD`],
      after[`${platform.participantCode}/payee-2/USD`],
    ]).toEqual(['8.00', '1.00', '1.00']);
    expect((await platform.get('/transfers')).body.count).toBe(2);
  });

  it('a turn DynamoDB throttles past the SDK retries answers 503 and keeps the id; the queued booking commits once, and the retry gets its answer', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '10');
    const general = generalOf(platform);
    await hotWithStalledCommitter(general);
    await committerGone(general);
    let throttled = 0;
    // Every read of a turn (its result and the lease) is refused as throttled: the booking is queued, then
    // its request can learn nothing more.
    const throttling = serviceWith(
      (next, context) => async (args) => {
        const input = (args as unknown as { input?: { RequestItems?: Record<string, { Keys?: unknown[] }> } }).input;
        const asksLease = JSON.stringify(input?.RequestItems ?? {}).includes('"LEASE"');
        if (context.commandName === 'BatchGetItemCommand' && asksLease) {
          throttled += 1;
          throw Object.assign(new Error('throughput exceeded'), {
            name: 'ProvisionedThroughputExceededException',
            $metadata: {},
          });
        }
        return next(args);
      },
      'throttleTurns',
      'initialize',
    );
    const requestId = randomUUID();
    const first = await platform.post('/transfers', payout(platform, 1), {
      headers: { 'X-Request-Id': requestId },
      via: throttling,
    });
    expect(throttled).toBeGreaterThan(0);
    expect(first.status, first.text).toBe(503);
    expect(first.headers.get('retry-after')).toBe('1');
    // The retry commits the queue itself (the lease is free), the throttled request's booking with it.
    const retry = await platform.post('/transfers', payout(platform, 1), { headers: { 'X-Request-Id': requestId } });
    expect(retry.status, retry.text).toBe(201);
    expect(retry.body.message.to_account_label).toBe('payee-1');
    const again = await platform.post('/transfers', payout(platform, 1), { headers: { 'X-Request-Id': requestId } });
    expect(again.text).toBe(retry.text);
    const next = await platform.post('/transfers', payout(platform, 2));
    expect(next.status, next.text).toBe(201);
    const after = await balances(platform);
    expect(after[`${platform.participantCode}/general/USD`]).toBe('8.00');
    expect((await platform.get('/transfers')).body.count).toBe(2);
  });

  it('a retry commits its queued booking itself once the committer is gone, though the account has cooled and nothing else books', async () => {
    const { platform, general, requestId } = await payoutLeftQueued('10');
    await committerGone(general);
    // The hot mark lapses: the account's next bookings would go the cold way, past the queue.
    await ctx.db.send(
      new UpdateCommand({
        TableName: ctx.tables.main,
        Key: accountEntity.key(general),
        UpdateExpression: 'SET hot_until_ms = :past',
        ExpressionAttributeValues: { ':past': 0 },
      }),
    );
    const retry = await platform.post('/transfers', payout(platform, 1), { headers: { 'X-Request-Id': requestId } });
    expect(retry.status, retry.text).toBe(201);
    expect(retry.body.message.to_account_label).toBe('payee-1');
    const after = await balances(platform);
    expect([
      after[`${platform.participantCode}/general/USD`],
      after[`${platform.participantCode}/payee-1/USD`],
    ]).toEqual(['9.00', '1.00']);
    expect((await platform.get('/transfers')).body.count).toBe(1);
    // Nothing left queued in any shard of the account's queue.
    expect(await queuedEntries(general)).toBe(0);
  });

  it('a queued booking the balance does not cover is refused alone and frees its request id: the retry runs again', async () => {
    const { platform, general, requestId } = await payoutLeftQueued('0.50', '1.00');
    await committerGone(general);
    // The next booking commits the queue: the waiting transfer (first in line) is refused, this one books.
    const next = await platform.post('/transfers', payout(platform, 2, '0.10'));
    expect(next.status, next.text).toBe(201);
    // Its id was freed with the refusal: the retry runs again and hears the refusal itself.
    const retry = await platform.post('/transfers', payout(platform, 1, '1.00'), {
      headers: { 'X-Request-Id': requestId },
    });
    expect(retry.status).toBe(400);
    expect(retry.body.errors).toEqual([
      `${platform.participantCode}/${platform.platformCode}/general: insufficient USD balance for 1`,
    ]);
    expect((await balances(platform))[`${platform.participantCode}/general/USD`]).toBe('0.40');
    expect((await platform.get('/transfers')).body.count).toBe(1);
  });

  it('a participant locked while its booking waits is refused like any locked participant, and nothing moves', async () => {
    const platform = await newPlatform();
    const [customer] = await customersViaHttp(platform, 1);
    await fund(platform.participantCode, 'USD', '10');
    const general = generalOf(platform);
    await hotWithStalledCommitter(general);
    const requestId = randomUUID();
    const toCustomer = {
      ...payout(platform, 0),
      to_participant_code: customer,
      to_account_group: platform.platformCode,
      to_account_label: 'general',
    };
    const queued = await platform.post('/transfers', toCustomer, {
      headers: { 'X-Request-Id': requestId },
      via: impatient,
    });
    expect(queued.status).toBe(503);
    await runAdmin(
      [
        'participant',
        'status',
        '--platform',
        platform.platformCode,
        '--participant',
        customer!,
        '--status',
        'locked',
        '--reason',
        'KYC review',
      ],
      { ctx },
    );
    await committerGone(general);
    expect((await platform.post('/transfers', payout(platform, 2))).status).toBe(201);
    // The queued booking was refused by its participant check; its id is free, and a retry hears why.
    const retry = await platform.post('/transfers', toCustomer, { headers: { 'X-Request-Id': requestId } });
    expect(retry.status).toBe(400);
    expect(retry.body.errors.join(' ')).toContain('to_participant_code');
    const after = await balances(platform);
    expect(after[`${platform.participantCode}/general/USD`]).toBe('9.00');
    expect(after[`${customer}/general/USD`]).toBeUndefined();
    const account = await ctx.db.send(
      new GetCommand({ TableName: ctx.tables.main, Key: accountEntity.key(general), ConsistentRead: true }),
    );
    expect(String(account.Item?.version)).toBe('2');
  });
});

/** How long the 64 callers keep at it: long enough for many rounds of the committer; 30 s in the long profile. */
const SOAK_SECONDS = byProfile(10, 30);

describe('many callers on one account', () => {
  it(`64 callers for ${SOAK_SECONDS} s: no 503 at all`, { timeout: 120_000 }, async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '1000000');
    const until = performance.now() + SOAK_SECONDS * 1000;
    const statuses = new Map<number, number>();
    let sent = 0;
    await Promise.all(
      Array.from({ length: 64 }, async (_, caller) => {
        while (performance.now() < until) {
          const response = await platform.post('/transfers', payout(platform, caller, '0.01'));
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
          sent += 1;
        }
      }),
    );
    expect(Object.fromEntries(statuses)).toEqual({ 201: sent });
    expect((await platform.get('/transfers')).body.count).toBe(sent);
    expect((await balances(platform))[`${platform.participantCode}/general/USD`]).toBe(
      new Money(1000000).minus(new Money(sent).div(100)).toFixed(2),
    );
  });
});
