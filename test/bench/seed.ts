import { randomUUID } from 'node:crypto';
import { BatchWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AppContext } from '../../lib/context.js';
import { achClearingAccount } from '../../lib/domain/ach-clearing.js';
import { parseCustomer } from '../../lib/domain/customers.js';
import { SYSTEM_PARTICIPANTS, systemAccount, type AccountRef } from '../../lib/domain/ledger.js';
import { Money } from '../../lib/domain/money.js';
import { validateTradeReport } from '../../lib/domain/trade-report.js';
import { newParticipantCode } from '../../lib/store/codes.js';
import { counterUpdates } from '../../lib/store/table/counters.js';
import { type CountChange } from '../../lib/store/table/transaction-items.js';
import { openedAccountItem } from '../../lib/store/ledger.js';
import { bookMovement } from '../../lib/ledger/engine.js';
import { movementRecordItems } from '../../lib/store/movements.js';
import { customerItems } from '../../lib/store/participants.js';
import { paymentCreationItem } from '../../lib/store/payments.js';
import { tradeItems } from '../../lib/store/trades.js';
import { settledTrade } from '../../lib/domain/trade.js';
import type { TaggedItem } from '../../lib/store/table/transaction-items.js';
import { transferRecordItem } from '../../lib/store/transfers.js';
import { withdrawalCreationItems } from '../../lib/store/withdrawals.js';
import { adultBody, tradeBody } from './fixtures.js';

/**
 * A platform's history written in bulk (as the list benchmark asks: "through the store's own write functions in
 * parallel batches, not through HTTP"). Every record is built by the store function its booking path uses
 * (`transferRecordItem`, `tradeItems`, `paymentCreationItem`, `withdrawalCreationItems`, `customerItems`,
 * `movementRecordItems`, `openedAccountItem`), so record, index entries and attributes are what production
 * writes; the items go out with BatchWriteItem, 25 per call and several calls in flight, instead of one
 * transaction per record. What the transactions would have added to the list counters is summed and
 * added once per counter at the end (the store's `counterUpdates`, so a count is exactly the records).
 *
 * What is not written: the conditions (the ids are fresh, and drawn codes are kept unique here), and for
 * transfers, payments and withdrawals the movements their bookings carry (their lists read only the
 * records). Accounts and movements are seeded together and stay a consistent ledger: one real deposit funds
 * a seed account, N movements move one unit each from it to N new accounts, and the accounts are written
 * with their final balances (the seed account at zero) instead of N balance updates.
 */

/** BatchWriteItem's limit. */
const BATCH = 25;
/** BatchWriteItem calls in flight: DynamoDB Local (a JVM) and this process share two cores. */
const IN_FLIGHT = 8;
/** Seeded records spread over the past 90 days, oldest first. */
const HISTORY_MS = 90 * 24 * 3600 * 1000;

export interface SeedTarget {
  ctx: AppContext;
  platformCode: string;
  participantCode: string;
  /** Another platform that reports every fourth trade with this platform's parties: those reach this
   * platform's list through a visibility entry (and a page through one batch read), as trades across
   * platforms do. */
  reporterPlatformCode: string;
}

/** Writes the Puts of `build(0..count-1)` with parallel BatchWriteItem calls; adds up their counter changes. */
async function bulkWrite(
  ctx: AppContext,
  count: number,
  build: (index: number) => readonly TaggedItem[],
): Promise<CountChange[]> {
  const counts: CountChange[] = [];
  function* batches(): Generator<Record<string, unknown>[]> {
    let batch: Record<string, unknown>[] = [];
    for (let index = 0; index < count; index++) {
      for (const tagged of build(index)) {
        const put = tagged.item.Put;
        if (!put || put.TableName !== ctx.tables.main)
          throw new Error('only Puts to the main table are written in bulk');
        batch.push(put.Item as Record<string, unknown>);
        counts.push(...(tagged.counts ?? []));
        if (batch.length === BATCH) {
          yield batch;
          batch = [];
        }
      }
    }
    if (batch.length > 0) yield batch;
  }
  const source = batches();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      for (let next = source.next(); !next.done; next = source.next()) await writeBatch(ctx, next.value);
    }),
  );
  return counts;
}

/** A call that gave up on time (the client's request timeout, a socket timing out) rather than being answered. */
function timedOut(error: unknown): boolean {
  const { name, code } = (error ?? {}) as { name?: unknown; code?: unknown };
  return name === 'TimeoutError' || name === 'RequestTimeout' || code === 'ETIMEDOUT' || code === 'ECONNRESET';
}

async function writeBatch(ctx: AppContext, items: Record<string, unknown>[]): Promise<void> {
  const table = ctx.tables.main;
  let pending: { PutRequest?: { Item?: Record<string, unknown> } }[] | undefined = items.map((Item) => ({
    PutRequest: { Item },
  }));
  let timeouts = 0;
  for (let round = 0; pending && pending.length > 0; round++) {
    if (round > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 20 * 2 ** round)));
    if (round > 10) throw new Error(`BatchWriteItem left ${pending.length} items unprocessed after ${round} rounds`);
    let out: { UnprocessedItems?: Record<string, { PutRequest?: { Item?: Record<string, unknown> } }[]> };
    try {
      out = await ctx.db.send(
        new BatchWriteCommand({
          RequestItems: { [table]: pending as { PutRequest: { Item: Record<string, unknown> } }[] },
        }),
      );
    } catch (error) {
      // On a loaded machine DynamoDB Local can take past the client's request timeout (2 s, retried by the SDK)
      // for a batch: seeding 100,000 records failed so. The batch is only Puts of fresh items, so sending it
      // again writes the same items: it is sent again after a pause, many times before the seeding gives up.
      if (!timedOut(error) || ++timeouts > 20) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 250 * timeouts)));
      round -= 1;
      continue;
    }
    pending = out.UnprocessedItems?.[table];
  }
}

/** The counters the seeded records would have moved, added once each (one shard per counter). */
async function addCounts(ctx: AppContext, counts: readonly CountChange[]): Promise<void> {
  for (const update of counterUpdates(ctx, counts)) await ctx.db.send(new UpdateCommand(update.Update!));
}

/** The time of record `index` of `count`, spread evenly over the history up to now. */
function timeOf(index: number, count: number, nowMs: number): number {
  return nowMs - HISTORY_MS + Math.floor(((index + 1) * HISTORY_MS) / count);
}

function seedTransfers({ ctx, platformCode, participantCode }: SeedTarget, count: number, nowMs: number) {
  // Numeric ids as newNumericId draws them (time x 1000 + 3 digits), kept unique by the index instead.
  const base = nowMs * 1000;
  return bulkWrite(ctx, count, (index) => {
    const at = timeOf(index, count, nowMs);
    const iso = new Date(at).toISOString();
    return [
      transferRecordItem(
        ctx,
        {
          id: base + index,
          platform_code: platformCode,
          created_at: iso,
          updated_at: iso,
          status: 'approved',
          from_participant_code: participantCode,
          from_account_group: platformCode,
          from_account_label: 'general',
          to_participant_code: participantCode,
          to_account_group: platformCode,
          to_account_label: 'savings',
          asset: 'USD',
          amount: '1.00',
          movement_id: randomUUID(),
          client_transfer_id: index % 2 === 0 ? `seed-${index}` : null,
          admin_transfer: false,
          prefunded: false,
        },
        at,
      ),
    ];
  });
}

function seedTrades({ ctx, platformCode, reporterPlatformCode }: SeedTarget, count: number, nowMs: number) {
  // Validated once per reporter, at `nowMs` (the live clock when this list's seeding began) with a body dated a
  // second before it; each record is that report at its own time (at most `nowMs`) with its own ids.
  const reportOf = (reporter: string) => {
    const body = { ...tradeBody(reporter, 'BUYER1', 'SELLR1'), transaction_timestamp: nowMs - 1_000 };
    const report = validateTradeReport(body, { platformCode: reporter, nowMs });
    if (!report.ok) throw new Error(report.errors.join('; '));
    return report.value;
  };
  const own = reportOf(platformCode);
  const reported = reportOf(reporterPlatformCode);
  return bulkWrite(ctx, count, (index) => {
    const at = timeOf(index, count, nowMs);
    const report = index % 4 === 3 ? reported : own;
    // Settled, as most of a platform's history is: a settled trade is in no index of open trades.
    const trade = settledTrade(
      { ...report, transaction_timestamp: at, client_trade_id: `seed-${randomUUID()}` },
      { tradeId: randomUUID(), nowMs: at, accountGroups: [platformCode, platformCode] },
    );
    return tradeItems(ctx, trade);
  });
}

function seedPayments({ ctx, platformCode, participantCode }: SeedTarget, count: number, nowMs: number) {
  const clearing = achClearingAccount({ platform_code: platformCode, participant_code: participantCode }).account;
  const statuses = ['submitted', 'posted', 'posted', 'posted'] as const;
  return bulkWrite(ctx, count, (index) => {
    const at = timeOf(index, count, nowMs);
    const id = randomUUID();
    return [
      paymentCreationItem(ctx, {
        transaction_id: id,
        platform_code: platformCode,
        trade_id: null,
        participant_code: participantCode,
        asset: 'USD',
        amount: '10.00',
        trade_amount: '10.00',
        status: statuses[index % statuses.length]!,
        transfer_type: 'debit',
        bank_transfer_id: id,
        funding: 'inbound_reference',
        external_account_id: null,
        description: null,
        bank_fee: null,
        inbound_reference_id: 'seed',
        clearing_account: clearing,
        created_at_ms: at,
        updated_at_ms: at,
      }),
    ];
  });
}

function seedWithdrawals({ ctx, platformCode, participantCode }: SeedTarget, count: number, nowMs: number) {
  const account = (label: string, asset: string): AccountRef => ({
    participant_code: participantCode,
    account_group: platformCode,
    account_label: label,
    asset,
  });
  return bulkWrite(ctx, count, (index) => {
    const at = timeOf(index, count, nowMs);
    return [
      ...withdrawalCreationItems(ctx, {
        withdrawal_request_id: randomUUID(),
        platform_code: platformCode,
        participant_code: participantCode,
        account_group: platformCode,
        account_label: 'general',
        asset: 'BTC',
        network: 'bitcoin',
        address: 'bc1qseedseedseedseedseedseedseedseedseed0',
        requested_amount: '0.00100000',
        fee_amount: '0.00001000',
        fee_notional: '1.00',
        quoted_currency: 'USD',
        trade_id: randomUUID(),
        quote_id: randomUUID(),
        status: index % 10 === 0 ? 'PENDING' : 'CONFIRMED',
        transaction_hash: index % 10 === 0 ? null : randomUUID().replaceAll('-', ''),
        source_account: account('general', 'BTC'),
        escrow_account: account('withdrawal_escrow', 'BTC'),
        fee_account: systemAccount(SYSTEM_PARTICIPANTS.externalBoundary, 'network_fees', 'BTC'),
        created_at: at,
        updated_at: at,
      }),
    ];
  });
}

function seedParticipants({ ctx, platformCode }: SeedTarget, count: number, nowMs: number) {
  // Parsed once; each customer differs by e-mail (the claim's key) and code. Codes are drawn as
  // createCustomer draws them; its conditional put retries a collision, here a set keeps them unique.
  // Parsed at `nowMs`, the live clock when this list's seeding began, as the body was just built from it (its
  // signature time a minute before).
  const customer = parseCustomer(adultBody(), nowMs);
  const codes = new Set<string>();
  return bulkWrite(ctx, count, (index) => {
    let code = newParticipantCode();
    while (codes.has(code)) code = newParticipantCode();
    codes.add(code);
    const email = `seed.${index}.${randomUUID()}@example.com`;
    return customerItems(
      ctx,
      platformCode,
      { ...customer, email, email_normalized: email },
      code,
      timeOf(index, count, nowMs),
    );
  });
}

/** `count` accounts and `count` movements into them (see the module comment), as a consistent ledger. */
async function seedAccountsAndMovements(
  { ctx, platformCode, participantCode }: SeedTarget,
  count: number,
  nowMs: number,
): Promise<CountChange[]> {
  const account = (label: string): AccountRef => ({
    participant_code: participantCode,
    account_group: platformCode,
    account_label: label,
    asset: 'USD',
  });
  const seed = account('seed');
  const unit = new Money(1);
  // The one real booking: the outside world's money enters the seed account (boundary shards and all).
  await bookMovement(ctx, {
    movement_id: randomUUID(),
    type: 'deposit',
    reference: 'seed',
    legs: [
      { account: seed, platform_code: platformCode, amount: new Money(count) },
      {
        account: systemAccount(SYSTEM_PARTICIPANTS.externalBoundary, 'deposits', 'USD'),
        platform_code: null,
        amount: new Money(count).neg(),
      },
    ],
  });
  const counts = await bulkWrite(ctx, count, (index) => {
    const at = timeOf(index, count, nowMs);
    const target = account(`a${String(index).padStart(7, '0')}`);
    const booked = movementRecordItems(
      ctx,
      {
        movement_id: randomUUID(),
        type: 'transfer',
        reference: `seed-${index}`,
        legs: [
          { account: seed, platform_code: platformCode, amount: unit.neg() },
          { account: target, platform_code: platformCode, amount: unit },
        ],
      },
      at,
    );
    // The movement's record and index entries (the platform's list, each account's) as booked; its balance
    // updates become the accounts' final state.
    return [...booked, openedAccountItem(ctx, target, platformCode, unit, at, 1)];
  });
  // Every unit moved out: the seed account ends at zero (it was opened, and counted, by the deposit).
  // Its deposit and the `count` movements out of it.
  await writeBatch(ctx, [
    openedAccountItem(ctx, seed, platformCode, new Money(0), nowMs, count + 1).item.Put!.Item as Record<
      string,
      unknown
    >,
  ]);
  return counts;
}

/** The lists one seeding fills, in order; accounts and movements come from one pass. */
export const SEEDED = [
  '/transfers',
  '/trades',
  '/payments/status',
  '/withdrawals/requests',
  '/participants',
  '/accounts + /movements',
] as const;

/**
 * Seeds `count` records into each list of `target`'s platform (the platform's own participant and seed
 * account come on top); returns the seconds each list took.
 */
export async function seedPlatform(
  target: SeedTarget,
  count: number,
  progress: (line: string) => void,
): Promise<Record<(typeof SEEDED)[number], number>> {
  const seeders = {
    '/transfers': seedTransfers,
    '/trades': seedTrades,
    '/payments/status': seedPayments,
    '/withdrawals/requests': seedWithdrawals,
    '/participants': seedParticipants,
    '/accounts + /movements': seedAccountsAndMovements,
  } as const;
  const seconds = {} as Record<(typeof SEEDED)[number], number>;
  for (const list of SEEDED) {
    const started = Date.now();
    // The live clock when this list begins, not when the platform's seeding did: seeding 100,000 records a list
    // takes minutes on a busy machine, and whatever a seeder builds or validates from the live clock (a trade
    // report, a customer's signature time) must agree with the history's `now` within the allowed skew. Each
    // list's records end at its own start, so all of them are in the past of every request that reads them.
    const nowMs = target.ctx.clock.nowMs();
    const counts = await seeders[list](target, count, nowMs);
    await addCounts(target.ctx, counts);
    seconds[list] = (Date.now() - started) / 1000;
    progress(`  ${target.platformCode}: ${count} ${list} in ${seconds[list].toFixed(1)} s`);
  }
  return seconds;
}
