import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { accountKey, type AccountRef } from '../../lib/domain/ledger.js';
import { Money } from '../../lib/domain/money.js';
import { bookMovement } from '../../lib/ledger/engine.js';
import { bookingLeaseEntity } from '../../lib/store/entities/booking-queue.js';
import { accountEntity } from '../../lib/store/entities/ledger.js';
import { createPlatform } from '../../lib/store/platforms.js';
import { clientWith, ctx, testContext } from '../support/context.js';
import { fund, hotWithStalledCommitter, queuedEntries, releaseStalledLease } from '../support/ledger.js';

/**
 * What a hot account's commit round costs in DynamoDB calls (lib/ledger/README.md, "Hot accounts"): on AWS a
 * round's time is its calls in sequence, and the rounds, one at a time per account, bound the account's
 * bookings a second (docs/ledger.md, "Throughput on AWS"). A queue is built behind a stalled committer, then
 * released; every call the drain makes goes through a counting middleware.
 */

interface Call {
  command: string;
  input: string;
  /** When it was sent and when its answer came (ms, performance.now()). */
  sentAt: number;
  answeredAt: number;
}

const calls: Call[] = [];
let recording = false;
const counting = testContext({
  db: clientWith(
    (next, context) => async (args) => {
      if (!recording) return next(args);
      const input = (args as unknown as { input?: unknown }).input;
      const call = {
        command: String(context.commandName),
        input: JSON.stringify(input ?? {}),
        sentAt: performance.now(),
        answeredAt: Number.POSITIVE_INFINITY,
      };
      calls.push(call);
      try {
        return await next(args);
      } finally {
        call.answeredAt = performance.now();
      }
    },
    'countCalls',
    'initialize',
  ),
});

/** Calls naming the account's lease item. */
const namesLease = (call: Call) => call.input.includes('"LEASE"');
/** A waiting request asking for its result (and whether the lease is free): a waiter's call, not the round's. */
const isWaiterPoll = (call: Call) => call.command === 'BatchGetItemCommand' && namesLease(call);
/** The transaction of a round: it removes queue entries (`Q#<booking id>`) as it answers them. */
const isRoundTransaction = (call: Call) => call.command === 'TransactWriteItemsCommand' && /"sk":"Q#/.test(call.input);
/** The start of a committer's tenure: the conditional put that takes the lease. */
const isLeaseTaken = (call: Call) => call.command === 'PutItemCommand' && namesLease(call);

describe('a hot account commit round', () => {
  it('takes at most 3 DynamoDB calls, 2 in sequence, once its committer holds the lease; the drain books each booking once', {
    timeout: 120_000,
  }, async () => {
    const platform = await createPlatform(ctx, 'hot round calls');
    const general: AccountRef = {
      participant_code: platform.participant_code,
      account_group: platform.platform_code,
      account_label: 'general',
      asset: 'USD',
    };
    await fund(platform.participant_code, 'USD', '1000');
    await hotWithStalledCommitter(general);
    const bookings = 48;
    const payees = 16;
    const booked = Promise.allSettled(
      Array.from({ length: bookings }, (_, i) =>
        bookMovement(counting, {
          movement_id: randomUUID(),
          type: 'transfer',
          reference: `hot round calls ${i}`,
          legs: [
            { account: general, platform_code: platform.platform_code, amount: new Money('-1') },
            {
              account: { ...general, account_label: `payee-${i % payees}` },
              platform_code: platform.platform_code,
              amount: new Money('1'),
            },
          ],
        }),
      ),
    );
    // Every booking waits in the queue behind the stalled committer.
    for (let waited = 0; (await queuedEntries(general)) < bookings; waited++) {
      expect(waited, 'all bookings queued').toBeLessThan(600);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    recording = true;
    // The stalled committer's lease lapses (deleted, as its expiry would): a waiting request takes it over.
    await releaseStalledLease(general);
    const outcomes = await booked;
    recording = false;
    expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toEqual([]);

    // Each booked once: the balance, the version and the empty queue say so.
    const stored = await ctx.db.send(
      new GetCommand({ TableName: ctx.tables.main, Key: accountEntity.key(general), ConsistentRead: true }),
    );
    expect(new Money(String(stored.Item?.balance)).toFixed(2)).toBe('952.00');
    expect(Number(stored.Item?.version)).toBe(1 + bookings);
    expect(await queuedEntries(general)).toBe(0);

    // The committer's calls, in order, cut into rounds at each round's transaction.
    const committer = calls.filter((call) => !isWaiterPoll(call));
    const rounds: Call[][] = [];
    let current: Call[] = [];
    for (const call of committer) {
      current.push(call);
      if (isRoundTransaction(call)) {
        rounds.push(current);
        current = [];
      }
    }
    const after = current;
    const tenures = committer.filter(isLeaseTaken).length;
    const steady = rounds.filter((round) => !round.some(isLeaseTaken));
    // Calls one after another in a round; a call sent while the one before it was still out counts with it.
    const sequential = (round: Call[]) => {
      const overlaps = (a: Call, b: Call) => a.sentAt < b.answeredAt && b.sentAt < a.answeredAt;
      let chain = 0;
      let previous: Call | undefined;
      for (const call of round) {
        if (!previous || !overlaps(previous, call)) chain += 1;
        previous = call;
      }
      return chain;
    };
    const summary = {
      rounds: rounds.length,
      tenures,
      callsPerRound: rounds.map((round) => round.map((call) => call.command.replace(/Command$/, '')).join(' ')),
      inSequence: rounds.map((round) => sequential(round)),
      afterLastRound: after.map((call) => call.command),
      waiterPolls: calls.filter(isWaiterPoll).length,
    };
    console.log(JSON.stringify(summary, null, 2));
    expect(rounds.length, JSON.stringify(summary)).toBeGreaterThanOrEqual(3);
    // One process drains the queue: one tenure (a round that lost its lease would start another).
    expect(tenures, JSON.stringify(summary)).toBe(1);
    expect(steady.length, JSON.stringify(summary)).toBe(rounds.length - 1);
    for (const round of steady) expect(round.length, JSON.stringify(summary)).toBeLessThanOrEqual(3);
    // In sequence, two: the read of the next shard goes alongside the transaction, not before or after it.
    for (const round of steady) expect(sequential(round), JSON.stringify(summary)).toBeLessThanOrEqual(2);
    // The last round gives the lease back in its own transaction: nothing is sent after it.
    expect(after, JSON.stringify(summary)).toEqual([]);
    const lease = await ctx.db.send(
      new GetCommand({
        TableName: ctx.tables.main,
        Key: bookingLeaseEntity.key({ account_key: accountKey(general) }),
        ConsistentRead: true,
      }),
    );
    expect(lease.Item).toBeUndefined();
  });
});
