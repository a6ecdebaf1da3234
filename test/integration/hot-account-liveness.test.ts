import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { type AccountRef } from '../../lib/domain/ledger.js';
import { Money } from '../../lib/domain/money.js';
import { bookMovement } from '../../lib/ledger/engine.js';
import { accountEntity } from '../../lib/store/entities/ledger.js';
import { createPlatform } from '../../lib/store/platforms.js';
import { clientWith, ctx, testContext } from '../support/context.js';
import { fund, hotWithStalledCommitter, markHot, releaseStalledLease, queuedEntries } from '../support/ledger.js';
import { lostAnswer } from '../support/raw-response.js';

/**
 * A hot account's queue keeps moving (lib/ledger/README.md, "Hot accounts"): what once held every booking
 * behind one (seed 202 of the simulation, under heavy load, had requests still queued after 120 s of retries).
 * A round's transaction fails as a whole, so a booking that makes every round it is in fail would hold up
 * everything queued after it: an entry queued again after its booking was answered (the SDK resending a queue
 * put whose answer was lost), or a booking whose other account a booking outside the queue keeps moving.
 */

/** A short wait bound, so a queue that does not move fails the test in seconds rather than the suite's 30. */
const WAIT = { HOT_ACCOUNT_WAIT_MS: '12000' };

async function hotPlatform(name: string) {
  const platform = await createPlatform(ctx, name);
  const general: AccountRef = {
    participant_code: platform.participant_code,
    account_group: platform.platform_code,
    account_label: 'general',
    asset: 'USD',
  };
  await fund(platform.participant_code, 'USD', '1000');
  return { platform, general, payee: (label: string): AccountRef => ({ ...general, account_label: label }) };
}

function transfer(from: AccountRef, to: AccountRef, platformCode: string, amount: string, reference: string) {
  return {
    movement_id: randomUUID(),
    type: 'transfer' as const,
    reference,
    legs: [
      { account: from, platform_code: platformCode, amount: new Money(amount).negated() },
      { account: to, platform_code: platformCode, amount: new Money(amount) },
    ],
  };
}

async function stored(account: AccountRef) {
  const out = await ctx.db.send(
    new GetCommand({ TableName: ctx.tables.main, Key: accountEntity.key(account), ConsistentRead: true }),
  );
  return { balance: new Money(String(out.Item?.balance ?? 0)).toFixed(2), version: Number(out.Item?.version ?? 0) };
}

/** Whether a call puts a queue entry (`Q#<booking id>`), its input marshalled or not. */
function putsQueueEntry(commandName: string | undefined, input: unknown): boolean {
  if (commandName !== 'PutItemCommand') return false;
  const sk = (input as { Item?: { sk?: unknown } }).Item?.sk;
  return /^Q#/.test(String((sk as { S?: unknown } | undefined)?.S ?? sk));
}

/**
 * A context whose first queue put is written but whose answer is lost, so the SDK sends the very same put again;
 * `meanwhile` runs between the write and the loss.
 */
function losingFirstQueuePutAnswer(name: string, meanwhile: () => Promise<unknown> = async () => undefined) {
  let lost = 0;
  const context = testContext({
    env: WAIT,
    db: clientWith(
      (next, command) => async (args) => {
        const result = await next(args);
        const input = (args as unknown as { input?: unknown }).input;
        if (lost === 0 && putsQueueEntry(command.commandName, input)) {
          lost += 1;
          await meanwhile();
          throw lostAnswer(result);
        }
        return result;
      },
      name,
    ),
  });
  return { context, lost: () => lost };
}

describe('a hot account queue under lost answers and contention', () => {
  it('a queue put whose answer was lost, sent again by the SDK, is the booking queued once: it books, once', {
    timeout: 120_000,
  }, async () => {
    const { platform, general, payee } = await hotPlatform('hot liveness lost put');
    await markHot(general);
    // Written, but the answer never arrives: the SDK sends the very same put again, which finds it.
    const losing = losingFirstQueuePutAnswer('loseQueuePutAnswer');
    await bookMovement(losing.context, transfer(general, payee('payee'), platform.platform_code, '1', 'lost put'));
    expect(losing.lost()).toBe(1);
    expect(await stored(general)).toEqual({ balance: '999.00', version: 2 });
    expect(await stored(payee('payee'))).toEqual({ balance: '1.00', version: 1 });
    expect(await queuedEntries(general)).toBe(0);
  });

  it('an entry queued again after its booking was answered is removed, its booking not booked twice, and the bookings after it book', {
    timeout: 120_000,
  }, async () => {
    const { platform, general, payee } = await hotPlatform('hot liveness requeued');
    await markHot(general);
    const first = transfer(general, payee('first'), platform.platform_code, '1', 'requeued');
    // Before the answer arrives, another request's round answers the booking (its entry deleted, its result
    // stored); then the answer is lost and the SDK's resent put queues the entry again.
    const losing = losingFirstQueuePutAnswer('requeueAnsweredEntry', () =>
      bookMovement(ctx, transfer(general, payee('second'), platform.platform_code, '1', 'second')),
    );
    await bookMovement(losing.context, first);
    expect(losing.lost()).toBe(1);
    // The entry is back in the queue though its booking was answered.
    expect(await queuedEntries(general)).toBe(1);

    // The next bookings go through a queue whose oldest entry is that one.
    const later = testContext({ env: WAIT });
    await Promise.all(
      [0, 1, 2].map((i) =>
        bookMovement(later, transfer(general, payee(`later-${i}`), platform.platform_code, '1', `later ${i}`)),
      ),
    );
    expect(await queuedEntries(general)).toBe(0);
    // Five bookings of 1.00 each, the first once.
    expect(await stored(general)).toEqual({ balance: '995.00', version: 6 });
    expect(await stored(payee('first'))).toEqual({ balance: '1.00', version: 1 });
  });

  it('a booking whose other account keeps being moved by bookings outside the queue does not hold up the bookings queued after it', {
    timeout: 180_000,
  }, async () => {
    const { platform, general, payee } = await hotPlatform('hot liveness contended');
    const funder = payee('funder');
    await fund(platform.participant_code, 'USD', '1000', 'funder');
    const busy = payee('busy');
    const busyPk = accountEntity.key(busy).pk;
    await hotWithStalledCommitter(general);
    let othersSettled = false;
    let moved = 0;
    const committer = testContext({
      env: WAIT,
      db: clientWith(
        (next, context) => async (args) => {
          const input = JSON.stringify((args as unknown as { input?: unknown }).input ?? {});
          // A round's transaction (it answers queue entries) that writes the busy account: a booking outside the
          // queue moves that account first, as a stream of cold bookings on it would, until the others are done.
          if (
            !othersSettled &&
            context.commandName === 'TransactWriteItemsCommand' &&
            input.includes('"sk":"Q#') &&
            input.includes(`"${busyPk}"`)
          ) {
            moved += 1;
            await bookMovement(ctx, transfer(funder, busy, platform.platform_code, '0.01', `cold ${moved}`));
          }
          return next(args);
        },
        'moveBusyAccount',
        'initialize',
      ),
    });
    // The booking on the busy account is queued first: the oldest, it is in every round a plain queue would make.
    const onBusy = bookMovement(committer, transfer(general, busy, platform.platform_code, '1', 'on busy'));
    for (let waited = 0; (await queuedEntries(general)) < 1; waited++) {
      expect(waited, 'the first booking queued').toBeLessThan(600);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const others = Array.from({ length: 10 }, (_, i) =>
      bookMovement(committer, transfer(general, payee(`other-${i}`), platform.platform_code, '1', `other ${i}`)),
    );
    for (let waited = 0; (await queuedEntries(general)) < 11; waited++) {
      expect(waited, 'all bookings queued').toBeLessThan(600);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // The stalled committer's lease lapses: a waiting request takes it over.
    await releaseStalledLease(general);
    const settled = await Promise.allSettled(others);
    othersSettled = true;
    const busyOutcome = await Promise.allSettled([onBusy]);

    expect(moved, 'rounds met a moved account').toBeGreaterThan(0);
    expect(settled.filter((outcome) => outcome.status === 'rejected')).toEqual([]);
    expect(busyOutcome.filter((outcome) => outcome.status === 'rejected')).toEqual([]);
    expect(await queuedEntries(general)).toBe(0);
    expect(await stored(general)).toEqual({ balance: '989.00', version: 12 });
    expect((await stored(busy)).balance).toBe(new Money('1').plus(new Money('0.01').times(moved)).toFixed(2));
    for (let i = 0; i < 10; i++) expect((await stored(payee(`other-${i}`))).balance).toBe('1.00');
  });
});
