import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AppContext } from '../../lib/context.js';
import { applyInOrder, type AccountChange, type AccountState } from '../../lib/domain/group-commit.js';
import { accountKey, type AccountRef } from '../../lib/domain/ledger.js';
import { Money } from '../../lib/domain/money.js';
import { batchTransaction, planBatch, type AccountRead } from '../../lib/ledger/batch.js';
import { decodeBooking, encodeBooking, type StoredBooking } from '../../lib/ledger/booking.js';
import { queueAnswers } from '../../lib/ledger/hot-account.js';
import { MAX_TRANSACTION_ITEMS } from '../../lib/store/table/transaction-items.js';

/**
 * Group commit's in-memory application (lib/domain/group-commit.ts, lib/ledger/batch.ts): however a
 * sequence of bookings is cut into batches, and whichever of them fail on their own, each booking gets the
 * answer and each account the balance and version that booking them one by one gives.
 */

const PLATFORM = 'PLAT01';
const account = (label: string): AccountRef => ({
  participant_code: 'P1',
  account_group: PLATFORM,
  account_label: label,
  asset: 'USD',
});
const LABELS = ['hot', 'a', 'b', 'c'];

/** A queued transfer of `amount` (decimal text) between two of the platform's accounts, as a round reads it. */
const storedTransfer = (
  id: string,
  index: number,
  from: string,
  to: string,
  amount: string,
  items: StoredBooking['items'],
): StoredBooking =>
  decodeBooking(
    encodeBooking({
      id,
      atMs: 1_000 + index,
      movement: {
        movement_id: `m${index}`,
        type: 'transfer',
        reference: `transfer:${index}`,
        legs: [
          { account: account(from), platform_code: PLATFORM, amount: `-${amount}` },
          { account: account(to), platform_code: PLATFORM, amount },
        ],
      },
      items,
    }),
  );

const cents = fc.integer({ min: 1, max: 5_000 }).map((n) => new Money(n).div(100));

describe('applyInOrder', () => {
  const changeArb: fc.Arbitrary<AccountChange[]> = fc
    .tuple(fc.constantFrom(...LABELS), fc.constantFrom(...LABELS), cents, fc.boolean())
    .filter(([from, to]) => from !== to)
    .map(([from, to, amount, guarded]) => [
      { key: from, change: amount.neg(), guarded },
      { key: to, change: amount, guarded: false },
    ]);
  const startArb = fc
    .tuple(...LABELS.map(() => fc.option(fc.integer({ min: 0, max: 10_000 }), { nil: undefined })))
    .map((balances) => {
      const start = new Map<string, AccountState>();
      balances.forEach((balance, i) => {
        if (balance !== undefined) start.set(LABELS[i]!, { balance: new Money(balance).div(100), version: i % 2 });
      });
      return start;
    });

  it('any cut into batches gives the answers and states of booking one by one', () => {
    fc.assert(
      fc.property(
        startArb,
        fc.array(changeArb, { maxLength: 60 }),
        fc.array(fc.integer({ min: 1, max: 20 }), { maxLength: 30 }),
        (start, bookings, cuts) => {
          const oneByOne = bookings.reduce(
            (state, changes) => {
              const { outcomes, states } = applyInOrder(state.states, [changes]);
              return { states, outcomes: [...state.outcomes, ...outcomes] };
            },
            {
              states: start as ReadonlyMap<string, AccountState>,
              outcomes: [] as ReturnType<typeof applyInOrder>['outcomes'],
            },
          );
          let states: ReadonlyMap<string, AccountState> = start;
          const batched: typeof oneByOne.outcomes = [];
          let rest = bookings;
          for (let i = 0; rest.length > 0; i++) {
            const size = cuts[i % Math.max(cuts.length, 1)] ?? rest.length;
            const applied = applyInOrder(states, rest.slice(0, size));
            batched.push(...applied.outcomes);
            states = applied.states;
            rest = rest.slice(size);
          }
          expect(batched.map(describeOutcome)).toEqual(oneByOne.outcomes.map(describeOutcome));
          expect(describeStates(states)).toEqual(describeStates(oneByOne.states));
          // No guarded debit ever took an account below zero.
          batched.forEach((outcome, i) => {
            if (outcome.kind !== 'booked') return;
            for (const change of bookings[i]!.filter((entry) => entry.guarded)) {
              expect(outcome.after.find((after) => after.key === change.key)!.balance.isNegative()).toBe(false);
            }
          });
        },
      ),
      { numRuns: 200 },
    );
  });
});

const describeOutcome = (outcome: ReturnType<typeof applyInOrder>['outcomes'][number]) =>
  outcome.kind === 'booked'
    ? outcome.after.map((a) => `${a.key}=${a.balance.toFixed()}@${a.version}`).join(',')
    : `refused:${outcome.key}`;
const describeStates = (states: ReadonlyMap<string, AccountState>) =>
  Object.fromEntries(
    [...states]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, state]) => [key, `${state.balance.toFixed()}@${state.version}`]),
  );

describe('planBatch and batchTransaction', () => {
  const ctx = { tables: { main: 'main', ttl: 'ttl' } } as AppContext;
  type Spec = { from: string; to: string; amount: Money; failsOnItsOwn: boolean; claim: number | null };
  const specArb: fc.Arbitrary<Spec> = fc
    .record({
      from: fc.constantFrom(...LABELS),
      to: fc.constantFrom(...LABELS),
      amount: cents,
      failsOnItsOwn: fc.boolean(),
      claim: fc.option(fc.nat(5), { nil: null }),
    })
    .filter((spec) => spec.from !== spec.to);

  const bookingOf = (spec: Spec, index: number): StoredBooking =>
    storedTransfer(`b${String(index).padStart(4, '0')}`, index, spec.from, spec.to, spec.amount.toFixed(), [
      // Every booking checks the platform's participant: identical checks merge.
      {
        item: {
          ConditionCheck: {
            TableName: 'main',
            Key: { pk: 'PARTICIPANT#P1', sk: 'PARTICIPANT' },
            ConditionExpression: 'attribute_exists(pk)',
          },
        },
      },
      ...(spec.claim === null
        ? []
        : [
            {
              item: {
                Put: {
                  TableName: 'ttl',
                  Item: { pk: `CLIENTID#${spec.claim}` },
                  ConditionExpression: 'attribute_not_exists(pk)',
                },
              },
            },
          ]),
    ]);

  /** Commits plans round by round as the engine does: a booking failing on its own is refused alone and the round replanned. */
  function commitAll(bookings: StoredBooking[], specs: Spec[], start: Map<string, AccountState>) {
    const states = new Map(start);
    const answers = new Map<string, string>();
    let queue = bookings;
    while (queue.length > 0) {
      const reads = new Map<string, AccountRead>(
        LABELS.map((label) => {
          const state = states.get(label);
          return [
            accountKey(account(label)),
            {
              account: account(label),
              platformCode: PLATFORM,
              exists: state !== undefined,
              balance: state?.balance ?? new Money(0),
              version: state?.version ?? -1,
              hotUntilMs: 0,
            },
          ];
        }),
      );
      const plan = planBatch(queue, reads, { queued: true, refuseUncovered: true });
      expect(plan.planned.length).toBeGreaterThan(0);
      const transaction = batchTransaction(
        ctx,
        plan,
        reads,
        queueAnswers(ctx, { account: 'hot', shardOf: () => 0, resultExpiresAtMs: 0, resultTtlSeconds: 0 }),
        0,
      );
      expect(transaction.items.length).toBeLessThanOrEqual(MAX_TRANSACTION_ITEMS);
      const named = transaction.items.map((item) => {
        const op = item.Put ?? item.Update ?? item.Delete ?? item.ConditionCheck;
        const key = item.Put ? item.Put.Item : (op as { Key: Record<string, unknown> }).Key;
        return `${op!.TableName}|${String(key!.pk)}|${String(key!.sk)}`;
      });
      expect(new Set(named).size, 'a transaction names each item once').toBe(named.length);
      // The first booking of the batch whose own condition fails (its claim taken, say) is refused alone;
      // nothing of the round commits and the others are planned again.
      const failing = plan.planned.find(
        (entry) => entry.outcome.kind === 'booked' && specs[Number(entry.booking.id.slice(1))]!.failsOnItsOwn,
      );
      if (failing) {
        answers.set(failing.booking.id, 'failed');
        queue = queue.filter((booking) => booking.id !== failing.booking.id);
        continue;
      }
      for (const entry of plan.planned) {
        if (entry.outcome.kind === 'refused') answers.set(entry.booking.id, 'refused');
        else {
          answers.set(entry.booking.id, 'booked');
          for (const [key, after] of entry.outcome.after)
            states.set(LABELS.find((label) => accountKey(account(label)) === key)!, after);
        }
      }
      const done = new Set(plan.planned.map((entry) => entry.booking.id));
      queue = queue.filter((booking) => !done.has(booking.id));
    }
    return { answers, states };
  }

  it('committed round by round, with failures and deferrals, equals booking one by one', () => {
    fc.assert(
      fc.property(
        fc.array(specArb, { minLength: 1, maxLength: 50 }),
        fc.integer({ min: 0, max: 200 }),
        (specs, funded) => {
          const start = new Map<string, AccountState>([['hot', { balance: new Money(funded), version: 1 }]]);
          const bookings = specs.map(bookingOf);
          const batched = commitAll(bookings, specs, start);
          const oneByOne = { answers: new Map<string, string>(), states: new Map(start) };
          for (const [index, spec] of specs.entries()) {
            const id = bookings[index]!.id;
            const from = oneByOne.states.get(spec.from);
            if ((from?.balance ?? new Money(0)).lt(spec.amount)) {
              oneByOne.answers.set(id, 'refused');
              continue;
            }
            if (spec.failsOnItsOwn) {
              oneByOne.answers.set(id, 'failed');
              continue;
            }
            oneByOne.answers.set(id, 'booked');
            for (const [label, change] of [
              [spec.from, spec.amount.neg()],
              [spec.to, spec.amount],
            ] as const) {
              const state = oneByOne.states.get(label) ?? { balance: new Money(0), version: -1 };
              oneByOne.states.set(label, {
                balance: state.balance.plus(change),
                version: Math.max(0, state.version) + 1,
              });
            }
          }
          expect(Object.fromEntries(batched.answers)).toEqual(Object.fromEntries(oneByOne.answers));
          expect(describeStates(batched.states)).toEqual(describeStates(oneByOne.states));
        },
      ),
      { numRuns: 150 },
    );
  });

  /**
   * A booking its debit can't cover is refused before the round's transaction, with its own conditions probed
   * there in its own item order, as the cold path would report them. Seeds 303 and 404 (10,000 operations): a
   * chunk of an award distribution that another run had credited probed only its trades (Puts), not its
   * marker (an Update), and its run heard "trade id taken" (a 500) instead of "chunk already credited".
   */
  it('a booking naming an item the batch already names another way (a different check, or a check and a write) waits for the next batch', () => {
    const check = (expression: string) => ({
      item: {
        ConditionCheck: {
          TableName: 'main',
          Key: { pk: 'PARTICIPANT#P9', sk: 'PARTICIPANT' },
          ConditionExpression: expression,
        },
      },
    });
    const put = {
      item: { Put: { TableName: 'main', Item: { pk: 'PARTICIPANT#P9', sk: 'PARTICIPANT' } } },
    };
    const booking = (index: number, items: StoredBooking['items']): StoredBooking =>
      storedTransfer(`b${index}`, index, 'hot', LABELS[1 + index]!, '1', items);
    const reads = new Map<string, AccountRead>(
      LABELS.map((label) => [
        accountKey(account(label)),
        {
          account: account(label),
          platformCode: PLATFORM,
          exists: true,
          balance: new Money(100),
          version: 1,
          hotUntilMs: 0,
        },
      ]),
    );
    for (const second of [check('attribute_exists(pk) AND #s = :active'), put]) {
      const first = booking(0, [check('attribute_exists(pk)')]);
      const plan = planBatch([first, booking(1, [second])], reads, { queued: true, refuseUncovered: true });
      expect(plan.planned.map((entry) => entry.booking.id)).toEqual(['b0']);
      expect(plan.deferred.map((entry) => entry.id)).toEqual(['b1']);
    }
    // Identical checks still merge.
    const same = planBatch(
      [booking(0, [check('attribute_exists(pk)')]), booking(1, [check('attribute_exists(pk)')])],
      reads,
      { queued: true, refuseUncovered: true },
    );
    expect(same.planned).toHaveLength(2);
  });

  it("a refused booking probes its conditioned writes, Updates too, in its own order, each with only its condition's names and values", () => {
    const chunk = decodeBooking(
      encodeBooking({
        id: 'b0001',
        atMs: 1_000,
        movement: {
          movement_id: 'm1',
          type: 'transfer',
          reference: 'transfer:1',
          legs: [
            { account: account('a'), platform_code: PLATFORM, amount: '-5' },
            { account: account('b'), platform_code: PLATFORM, amount: '5' },
          ],
        },
        items: [
          {
            item: {
              Update: {
                TableName: 'main',
                Key: { pk: 'AWARDS#D', sk: 'CHUNK#0000' },
                UpdateExpression: 'SET #status = :credited, credited_at = :now',
                ConditionExpression: 'attribute_exists(pk) AND #status = :pending',
                ExpressionAttributeNames: { '#status': 'status' },
                ExpressionAttributeValues: { ':credited': 'credited', ':pending': 'pending', ':now': 1 },
              },
            },
            refusal: { status: 409, errors: ['chunk already credited'] },
          },
          {
            item: {
              ConditionCheck: {
                TableName: 'main',
                Key: { pk: 'PARTICIPANT#P2', sk: 'PARTICIPANT' },
                ConditionExpression: 'attribute_exists(pk)',
              },
            },
            refusal: { status: 400, errors: ['participant locked'] },
          },
          {
            item: {
              Put: {
                TableName: 'main',
                Item: { pk: 'TRADE#T', sk: 'TRADE' },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            refusal: { status: 409, errors: ['trade id taken'] },
          },
          // No refusal of its own: nothing to probe.
          {
            item: {
              Put: {
                TableName: 'main',
                Item: { pk: 'EVENT#E', sk: 'EVENT' },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
          },
        ],
      }),
    );
    const reads = new Map<string, AccountRead>(
      ['a', 'b'].map((label) => [
        accountKey(account(label)),
        {
          account: account(label),
          platformCode: PLATFORM,
          exists: true,
          balance: new Money(1),
          version: 3,
          hotUntilMs: 0,
        },
      ]),
    );
    const plan = planBatch([chunk], reads, { queued: true, refuseUncovered: true });
    expect(plan.planned[0]!.outcome.kind).toBe('refused');
    const transaction = batchTransaction(
      ctx,
      plan,
      reads,
      queueAnswers(ctx, { account: 'hot', shardOf: () => 0, resultExpiresAtMs: 0, resultTtlSeconds: 0 }),
      0,
    );
    const checks = transaction.items.flatMap((item, i) =>
      item.ConditionCheck ? [{ check: item.ConditionCheck, origin: transaction.origins[i] }] : [],
    );
    expect(checks).toEqual([
      {
        check: {
          TableName: 'main',
          Key: { pk: 'AWARDS#D', sk: 'CHUNK#0000' },
          ConditionExpression: 'attribute_exists(pk) AND #status = :pending',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':pending': 'pending' },
        },
        origin: { kind: 'item', booking: 0, index: 0 },
      },
      {
        check: {
          TableName: 'main',
          Key: { pk: 'TRADE#T', sk: 'TRADE' },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
        origin: { kind: 'item', booking: 0, index: 2 },
      },
    ]);
  });
});
