import { randomUUID } from 'node:crypto';
import {
  BatchWriteCommand,
  GetCommand,
  QueryCommand,
  ScanCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '../../infra/ops/cli.js';
import { awardsEscrowAccount } from '../../lib/awards/distribute-awards.js';
import type { AppContext } from '../../lib/context.js';
import { accountIdOf, SYSTEM_PARTICIPANTS, systemAccount, type AccountRef } from '../../lib/domain/ledger.js';
import { Money } from '../../lib/domain/money.js';
import { runLedgerCheck } from '../../lib/reconciliation/run-ledger-check.js';
import {
  AWARD_CHUNK_ITEM_VERSION,
  distributionCreationItems,
  getDistribution,
  type Distribution,
  type DistributionChunk,
} from '../../lib/store/awards.js';
import { bookMovement } from '../../lib/ledger/engine.js';
import { chunkEntity } from '../../lib/store/entities/award.js';
import { EVENT_ITEM_VERSION, getEvent } from '../../lib/store/events.js';
import { accountEntity, accountShardEntity } from '../../lib/store/entities/ledger.js';
import { eventEntity } from '../../lib/store/entities/event.js';
import { tradeEntity } from '../../lib/store/entities/trade.js';
import { ACCOUNT_ITEM_VERSION, getAccount, OUTSIDE_ACCOUNT_SHARDS, openedAccountItem } from '../../lib/store/ledger.js';
import { findMigration, ITEM_VERSIONS, runMigration } from '../../lib/store/migrations/index.js';
import type { MigrationProgress } from '../../lib/store/migrations/records.js';
import { participantEntity } from '../../lib/store/entities/participant.js';
import { changeParticipantStatus, getParticipantStatusState } from '../../lib/store/participants.js';
import { createPlatform } from '../../lib/store/platforms.js';
import { transactWrite } from '../../lib/store/table/transactions.js';
import { getTrade, TRADE_ITEM_VERSION, updateTrade } from '../../lib/store/trades.js';
import { storeUnfundedTrade } from '../support/trades.js';
import { testContext, testEndpoint } from '../support/context.js';
import { createStreamFreeTables, ownTableNames } from '../support/tables.js';

/**
 * Item versions (lib/store/README.md, "Item versions"): what writers stamp, how readers branch on the version
 * (legacy items read with their defaults, a version 2 item missing what it guarantees refused), and migration
 * 0002, which upgrades legacy items once, beside live bookings. On tables of this file's own: the migration's
 * whole-table run and the ledger check scan everything in them.
 */

const tables = ownTableNames('item-versions');
const own = testContext({ tables });
const migration = findMigration(ITEM_VERSIONS)!;
const BOUNDARY = SYSTEM_PARTICIPANTS.externalBoundary;

beforeAll(async () => {
  await createStreamFreeTables(testEndpoint(), tables);
});

const usd = (platformCode: string, label: string): AccountRef => ({
  participant_code: platformCode,
  account_group: platformCode,
  account_label: label,
  asset: 'USD',
});

async function stored(on: AppContext, key: Record<string, string>): Promise<Record<string, any> | undefined> {
  return (await on.db.send(new GetCommand({ TableName: on.tables.main, Key: key, ConsistentRead: true }))).Item;
}

const num = (value: unknown) => (value === undefined ? undefined : Number(String(value)));

/** Turns a stored item back into what an older release left: `remove`d attributes absent, `set` ones as given. */
async function makeLegacy(
  on: AppContext,
  key: Record<string, string>,
  remove: string[],
  set: Record<string, unknown> = {},
): Promise<void> {
  const sets = Object.keys(set).map((name, i) => `#s${i} = :s${i}`);
  await on.db.send(
    new UpdateCommand({
      TableName: on.tables.main,
      Key: key,
      UpdateExpression: [
        ...(sets.length > 0 ? [`SET ${sets.join(', ')}`] : []),
        ...(remove.length > 0 ? [`REMOVE ${remove.map((_, i) => `#r${i}`).join(', ')}`] : []),
      ].join(' '),
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: {
        ...Object.fromEntries(remove.map((name, i) => [`#r${i}`, name])),
        ...Object.fromEntries(Object.keys(set).map((name, i) => [`#s${i}`, name])),
      },
      ...(sets.length > 0 && {
        ExpressionAttributeValues: Object.fromEntries(Object.values(set).map((value, i) => [`:s${i}`, value])),
      }),
    }),
  );
}

/** A deposit of `amount` USD from the outside world into `account`, through the booking engine. */
async function depositInto(on: AppContext, platformCode: string, account: AccountRef, amount = '1'): Promise<void> {
  await bookMovement(on, {
    movement_id: randomUUID(),
    type: 'deposit',
    reference: `item-versions-${randomUUID()}`,
    legs: [
      { account, platform_code: platformCode, amount: new Money(amount) },
      { account: systemAccount(BOUNDARY, 'deposits', 'USD'), platform_code: null, amount: new Money(amount).neg() },
    ],
  });
}

/** The platform's stored event items (its events list), oldest first. */
async function eventItemsOf(on: AppContext, platformCode: string): Promise<Record<string, any>[]> {
  const out = await on.db.send(
    new QueryCommand({
      TableName: on.tables.main,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': eventEntity.indexPartition('gsi1', { platform_code: platformCode }) },
    }),
  );
  return out.Items ?? [];
}

/** A distribution of `chunkCount` chunks recorded by phase 1's items, chunk `i` paying from lane `i + 1`. */
async function recordDistribution(on: AppContext, platformCode: string, chunkCount: number) {
  const id = randomUUID();
  const escrow = awardsEscrowAccount(platformCode, 'BTC', 0).account;
  const chunks = Array.from(
    { length: chunkCount },
    (_, index): DistributionChunk => ({
      index,
      recipients: [{ participant_code: platformCode, trade_id: randomUUID() }],
      movement_id: randomUUID(),
      escrow: awardsEscrowAccount(platformCode, 'BTC', index + 1).account,
      status: 'pending',
      credited_at: null,
    }),
  );
  const distribution: Distribution = {
    platform_code: platformCode,
    distribution_id: id,
    asset: 'BTC',
    quantity: '0.00100000',
    quoted_currency: 'USD',
    recipient_count: chunkCount,
    total: '0.00100000',
    fingerprint: 'fingerprint',
    pool: { ...usd(platformCode, 'awards'), asset: 'BTC' },
    escrow,
    chunk_count: chunkCount,
    status: 'distributing',
    created_at: on.clock.nowMs(),
    completed_at: null,
  };
  await transactWrite(on, distributionCreationItems(on, distribution, chunks));
  return {
    id,
    escrow,
    chunks,
    chunkKey: (index: number) => chunkEntity.key({ platform_code: platformCode, distribution_id: id, index }),
  };
}

/** A platform with a booked account, its own participant and a recorded distribution, all as written now. */
async function platformWithItems(on: AppContext) {
  const platform = await createPlatform(on, 'item versions', '0');
  const code = platform.platform_code;
  const account = usd(code, 'general');
  await depositInto(on, code, account);
  const distribution = await recordDistribution(on, code, 2);
  return { code, account, distribution };
}

const noProgress = (): MigrationProgress => ({ pages: 0, read: 0, migrated: 0, written: 0, already: 0, skipped: 0 });

describe('items written now', () => {
  it('carry item_version 2 and every attribute it guarantees', async () => {
    expect([
      ACCOUNT_ITEM_VERSION,
      participantEntity.version,
      AWARD_CHUNK_ITEM_VERSION,
      EVENT_ITEM_VERSION,
      TRADE_ITEM_VERSION,
    ]).toEqual([2, 2, 2, 2, 2]);
    const { code, account, distribution } = await platformWithItems(own);

    const accountItem = (await stored(own, accountEntity.key(account)))!;
    expect([accountItem.item_version, accountItem.version, accountItem.movement_count].map(num)).toEqual([2, 1, 1]);
    expect(num(accountItem.last_update)).toBeGreaterThan(0);
    // The outside world's shard the deposit drew: unversioned, so neither version nor movement count.
    const shards = (
      await Promise.all(
        Array.from({ length: OUTSIDE_ACCOUNT_SHARDS }, (_, shard) =>
          stored(own, accountShardEntity.key({ ...systemAccount(BOUNDARY, 'deposits', 'USD'), shard })),
        ),
      )
    ).filter((item) => item !== undefined);
    expect(shards.length).toBeGreaterThan(0);
    for (const shard of shards)
      expect([shard!.item_version, shard!.version, shard!.movement_count].map(num)).toEqual([2, undefined, undefined]);

    const participant = (await stored(own, participantEntity.key({ participant_code: code })))!;
    expect([participant.item_version, participant.status_version].map(num)).toEqual([2, 0]);

    const chunk = (await stored(own, distribution.chunkKey(1)))!;
    expect(num(chunk.item_version)).toBe(2);
    expect(chunk.escrow).toEqual(distribution.chunks[1]!.escrow);

    const [event] = await eventItemsOf(own, code);
    expect(num(event!.item_version)).toBe(2);
    expect(event!.expires_at_ms).toBeUndefined();

    const { trade_id: storedTradeId } = await storeUnfundedTrade(own, own.clock.nowMs());
    const trade = (await stored(own, tradeEntity.key({ trade_id: storedTradeId })))!;
    expect([trade.item_version, trade.status_sequence].map(num)).toEqual([2, 1]);
    expect(trade.visible_to).toEqual(['PLAT01']);
  });
});

/** A legacy trade (from before status events and cross-platform visibility), read back. */
async function legacyTrade(on: AppContext) {
  const { trade_id } = await storeUnfundedTrade(on, on.clock.nowMs());
  await makeLegacy(on, tradeEntity.key({ trade_id }), ['item_version', 'status_sequence', 'visible_to']);
  return (await getTrade(on, trade_id, { consistent: true }))!;
}

const ACTIVATE = { trade_state: 'active', settlement_state: 'obligations_outstanding' } as const;

describe('readers branch on the item version', () => {
  it("a trade: a legacy one reads its sequence as its creation's (1) and is its reporter's alone; its status change numbers 2; stamped 2 without them is refused", async () => {
    const trade = await legacyTrade(own);
    expect(trade.status_sequence).toBe(1);
    expect(trade.visible_to).toEqual(['PLAT01']);
    expect(await updateTrade(own, trade, ['accepted'], ACTIVATE, own.clock.nowMs())).toBe(true);
    const changed = (await stored(own, tradeEntity.key({ trade_id: trade.trade_id })))!;
    expect([changed.item_version, changed.status_sequence].map(num)).toEqual([undefined, 2]);

    await makeLegacy(own, tradeEntity.key({ trade_id: trade.trade_id }), ['status_sequence'], { item_version: 2 });
    await expect(getTrade(own, trade.trade_id)).rejects.toThrow(
      /stored trade TRADE#\S+ \/ TRADE does not parse: .*status_sequence/,
    );
  });

  it('an account: a legacy item reads what is absent as 0 and what is there as stored; books on either', async () => {
    const { code, account } = await platformWithItems(own);
    const numbered = usd(code, 'numbered');
    for (let i = 0; i < 3; i++) await depositInto(own, code, numbered);
    // From before versions and counts: neither, nor item_version.
    await makeLegacy(own, accountEntity.key(account), ['item_version', 'version', 'movement_count']);
    // From before item versions only: its version and count are real.
    await makeLegacy(own, accountEntity.key(numbered), ['item_version']);

    expect((await getAccount(own, account))!.movement_count).toBe(0);
    expect((await getAccount(own, numbered))!.movement_count).toBe(3);
    await depositInto(own, code, account);
    await depositInto(own, code, numbered);
    // Each booking wrote what version 2 guarantees, so it stamped it.
    const after = (await stored(own, accountEntity.key(account)))!;
    expect([after.item_version, after.version, after.movement_count].map(num)).toEqual([2, 1, 1]);
    const numberedAfter = (await stored(own, accountEntity.key(numbered)))!;
    expect([numberedAfter.item_version, numberedAfter.version, numberedAfter.movement_count].map(num)).toEqual([
      2, 4, 4,
    ]);
    expect((await getAccount(own, numbered))!.balance.toFixed()).toBe('4');
  });

  it('an account stamped 2 without what 2 guarantees is refused, not read as a default', async () => {
    const { account } = await platformWithItems(own);
    await makeLegacy(own, accountEntity.key(account), ['movement_count']);
    await expect(getAccount(own, account)).rejects.toThrow(
      /account .* does not parse: movement_count: absent at item_version 2/,
    );
  });

  it('a participant: a legacy item without status_version reads 0 and changes status; stamped 2 without it is refused', async () => {
    const { code } = await platformWithItems(own);
    await makeLegacy(own, participantEntity.key({ participant_code: code }), ['item_version', 'status_version']);
    const state = (await getParticipantStatusState(own, code))!;
    expect(state.statusVersion).toBe(0);
    await changeParticipantStatus(own, state, 'locked', own.clock.nowMs(), []);
    const changed = (await stored(own, participantEntity.key({ participant_code: code })))!;
    expect([changed.item_version, changed.status_version].map(num)).toEqual([2, 1]);
    expect(changed.status).toBe('locked');

    await makeLegacy(own, participantEntity.key({ participant_code: code }), ['status_version']);
    await expect(getParticipantStatusState(own, code)).rejects.toThrow(
      /stored participant PARTICIPANT#.* does not parse: status_version/,
    );
  });

  it("an award chunk: a legacy one without escrow pays from the distribution's, one with its lane from that; stamped 2 without it is refused", async () => {
    const { code, distribution } = await platformWithItems(own);
    await makeLegacy(own, distribution.chunkKey(0), ['item_version', 'escrow']);
    await makeLegacy(own, distribution.chunkKey(1), ['item_version']);
    const read = (await getDistribution(own, code, distribution.id))!;
    expect(read.chunks.map((chunk) => chunk.escrow)).toEqual([distribution.escrow, distribution.chunks[1]!.escrow]);
    // Stamped 2 without its lane: refused, never paid from the distribution's escrow by default.
    await makeLegacy(own, distribution.chunkKey(0), [], { item_version: 2 });
    await expect(getDistribution(own, code, distribution.id)).rejects.toThrow(
      /stored award_distribution_chunk .*CHUNK#0000 does not parse: escrow/,
    );
  });

  it("an event: a legacy one's expires_at_ms is its expiry; version 2's is its ttl, whatever else it holds", async () => {
    const { code } = await platformWithItems(own);
    const [event] = await eventItemsOf(own, code);
    const eventId = JSON.parse(event!.body).id as string;
    const expired = own.clock.nowMs() - 1_000;
    await makeLegacy(own, eventEntity.key({ event_id: eventId }), ['item_version'], { expires_at_ms: expired });
    expect(await getEvent(own, code, eventId)).toBeUndefined();
    await makeLegacy(own, eventEntity.key({ event_id: eventId }), [], { item_version: 2 });
    expect((await getEvent(own, code, eventId))?.expiresAtMs).toBe(num(event!.ttl)! * 1000);
  });
});

/** A context whose Scans answer `pages` in order: a migration page done again on what an earlier read saw. */
function replaying(on: AppContext, pages: unknown[]): AppContext {
  const queue = [...pages];
  const db = {
    send: (command: unknown) =>
      command instanceof ScanCommand ? Promise.resolve(queue.shift()) : on.db.send(command as never),
  };
  return { ...on, db: db as never };
}

/** A context recording what its Scans answered. */
function recording(on: AppContext, pages: unknown[]): AppContext {
  const db = {
    send: async (command: unknown) => {
      const out = await on.db.send(command as never);
      if (command instanceof ScanCommand) pages.push(out);
      return out;
    },
  };
  return { ...on, db: db as never };
}

describe('migration 0002-item-versions', () => {
  it("upgrades a platform's legacy items once, writing the defaults and keeping what is stored; a page done again changes nothing", {
    timeout: 120_000,
  }, async () => {
    const { code, account, distribution } = await platformWithItems(own);
    const numbered = usd(code, 'numbered');
    for (let i = 0; i < 3; i++) await depositInto(own, code, numbered);
    const [first, second] = await eventItemsOf(own, code);
    const [oldEvent, trimmedEvent] = [first!, second!].map((item) => JSON.parse(item.body).id as string);
    const oldExpiryMs = num(first!.ttl)! * 1000 - 1_500;
    await makeLegacy(own, accountEntity.key(account), ['item_version', 'version', 'movement_count']);
    await makeLegacy(own, accountEntity.key(numbered), ['item_version']);
    await makeLegacy(own, participantEntity.key({ participant_code: code }), ['item_version', 'status_version']);
    await makeLegacy(own, distribution.chunkKey(0), ['item_version', 'escrow']);
    await makeLegacy(own, eventEntity.key({ event_id: oldEvent! }), ['item_version'], { expires_at_ms: oldExpiryMs });
    await makeLegacy(own, eventEntity.key({ event_id: trimmedEvent! }), ['item_version']);

    const pages: unknown[] = [];
    const done = await runMigration(recording(own, pages), migration, {
      platformCode: code,
      operator: 'test',
      reason: 'item versions',
    });
    expect(done).toMatchObject({ outcome: 'applied', progress: { read: 6, migrated: 6, written: 6, already: 0 } });

    const accountItem = (await stored(own, accountEntity.key(account)))!;
    expect([accountItem.item_version, accountItem.version, accountItem.movement_count].map(num)).toEqual([2, 0, 0]);
    const numberedItem = (await stored(own, accountEntity.key(numbered)))!;
    expect([numberedItem.item_version, numberedItem.version, numberedItem.movement_count].map(num)).toEqual([2, 3, 3]);
    const participant = (await stored(own, participantEntity.key({ participant_code: code })))!;
    expect([participant.item_version, participant.status_version].map(num)).toEqual([2, 0]);
    const chunk = (await stored(own, distribution.chunkKey(0)))!;
    expect(num(chunk.item_version)).toBe(2);
    expect(chunk.escrow).toEqual(distribution.escrow);
    const old = (await stored(own, eventEntity.key({ event_id: oldEvent! })))!;
    expect([old.item_version, old.ttl, old.expires_at_ms].map(num)).toEqual([
      2,
      Math.ceil(oldExpiryMs / 1000),
      undefined,
    ]);
    const trimmed = (await stored(own, eventEntity.key({ event_id: trimmedEvent! })))!;
    expect([trimmed.item_version, trimmed.ttl].map(num)).toEqual([2, num(second!.ttl)]);
    // Read as before the upgrade.
    expect((await getDistribution(own, code, distribution.id))!.chunks[0]!.escrow).toEqual(distribution.escrow);
    expect((await getEvent(own, code, oldEvent!))!.expiresAtMs).toBe(Math.ceil(oldExpiryMs / 1000) * 1000);

    // Live changes since, then the same pages again (a crash after the writes, before the position was saved).
    await depositInto(own, code, account);
    await changeParticipantStatus(own, (await getParticipantStatusState(own, code))!, 'locked', own.clock.nowMs(), []);
    const again = noProgress();
    let position: Record<string, unknown> | undefined;
    const replay = replaying(own, pages);
    do position = await migration.page(replay, { platformCode: code }, position, again);
    while (position !== undefined);
    expect(again).toMatchObject({ read: 6, migrated: 0, written: 0, already: 6 });
    const booked = (await stored(own, accountEntity.key(account)))!;
    expect([booked.version, booked.movement_count].map(num)).toEqual([1, 1]);
    expect(num((await stored(own, participantEntity.key({ participant_code: code })))!.status_version)).toBe(1);
    expect(num((await stored(own, eventEntity.key({ event_id: oldEvent! })))!.ttl)).toBe(Math.ceil(oldExpiryMs / 1000));

    expect(await runMigration(own, migration, { platformCode: code, operator: 'test', reason: 'again' })).toMatchObject(
      { outcome: 'already applied' },
    );
  });

  it('runs beside live bookings of the accounts it upgrades: no increment lost, none refused', {
    timeout: 240_000,
  }, async () => {
    const platform = await createPlatform(own, 'item versions live', '0');
    const code = platform.platform_code;
    // 250 accounts from before versions (three pages of the migration's scan), five of them busy throughout.
    const accounts = Array.from({ length: 250 }, (_, i) => usd(code, `l${i}`));
    const legacy = accounts.map((account) => {
      const item = openedAccountItem(own, account, code, new Money(0), own.clock.nowMs(), 1).item.Put!.Item!;
      delete item.item_version;
      delete item.version;
      delete item.movement_count;
      return item;
    });
    for (let start = 0; start < legacy.length; start += 25) {
      let pending: any[] | undefined = legacy.slice(start, start + 25).map((Item) => ({ PutRequest: { Item } }));
      while (pending && pending.length > 0) {
        const out: { UnprocessedItems?: Record<string, any[]> } = await own.db.send(
          new BatchWriteCommand({ RequestItems: { [tables.main]: pending } }),
        );
        pending = out.UnprocessedItems?.[tables.main];
      }
    }
    const busy = [0, 60, 120, 180, 240].map((i) => accounts[i]!);
    let running = true;
    const bookings = busy.map(async (account) => {
      let made = 0;
      while (running || made < 5) {
        await depositInto(own, code, account);
        made += 1;
      }
      return made;
    });
    const done = await runMigration(own, migration, { platformCode: code, operator: 'test', reason: 'while serving' });
    running = false;
    const made = await Promise.all(bookings);
    expect(done.outcome).toBe('applied');
    // The quiet ones by the migration; a busy one by whichever of it and a booking came first.
    expect(done.progress.migrated).toBeGreaterThanOrEqual(accounts.length - busy.length);
    expect(done.progress.migrated + done.progress.already).toBeLessThanOrEqual(accounts.length);

    for (const [i, account] of busy.entries()) {
      const item = (await stored(own, accountEntity.key(account)))!;
      expect([item.item_version, item.version, item.movement_count].map(num)).toEqual([2, made[i], made[i]]);
      expect((await getAccount(own, account))!.balance.toFixed()).toBe(String(made[i]));
    }
    const quiet = (await Promise.all(accounts.map((account) => stored(own, accountEntity.key(account))))).filter(
      (item) => !busy.some((account) => accountIdOf(account) === item!.account_id),
    );
    expect(quiet).toHaveLength(accounts.length - busy.length);
    for (const item of quiet)
      expect([item!.item_version, item!.version, item!.movement_count].map(num)).toEqual([2, 0, 0]);
  });
});

/** A context that runs `between` once, just before its first transaction (after the reads it is conditioned on). */
function beforeFirstTransaction(on: AppContext, between: () => Promise<unknown>, transactions: { count: number }) {
  const db = {
    send: async (command: unknown) => {
      if (command instanceof TransactWriteCommand && transactions.count++ === 0) await between();
      return on.db.send(command as never);
    },
  };
  return { ...on, db: db as never } as AppContext;
}

describe('migration 0002-item-versions between a read and its write', () => {
  it('a booking that read a legacy account commits on the upgraded item at its first attempt', async () => {
    const { code, account } = await platformWithItems(own);
    await makeLegacy(own, accountEntity.key(account), ['item_version', 'version', 'movement_count']);
    const transactions = { count: 0 };
    // A process that reads the legacy item: `own` kept the account's state from the set-up (before the item was
    // made legacy behind its back), and a booking on a kept state does not read.
    const reading = { ...own, caches: { ...own.caches, accountStates: new Map() } } as AppContext;
    const booking = beforeFirstTransaction(
      reading,
      () => runMigration(own, migration, { platformCode: code, operator: 'test', reason: 'between' }),
      transactions,
    );
    await depositInto(booking, code, account);
    // One transaction: the upgrade (version 0, written explicitly) still met the condition the read set.
    expect(transactions.count).toBe(1);
    const item = (await stored(own, accountEntity.key(account)))!;
    expect([item.item_version, item.version, item.movement_count].map(num)).toEqual([2, 1, 1]);
    expect((await getAccount(own, account))!.balance.toFixed()).toBe('2');
  });

  it('a status change that read a legacy participant commits on the upgraded item', async () => {
    const { code } = await platformWithItems(own);
    await makeLegacy(own, participantEntity.key({ participant_code: code }), ['item_version', 'status_version']);
    const transactions = { count: 0 };
    const changing = beforeFirstTransaction(
      own,
      () => runMigration(own, migration, { platformCode: code, operator: 'test', reason: 'between' }),
      transactions,
    );
    const state = (await getParticipantStatusState(changing, code))!;
    await changeParticipantStatus(changing, state, 'locked', own.clock.nowMs(), []);
    expect(transactions.count).toBe(1);
    const item = (await stored(own, participantEntity.key({ participant_code: code })))!;
    expect([item.item_version, item.status_version].map(num)).toEqual([2, 1]);
  });
});

describe('migration 0002-item-versions between a read and its write: a trade', () => {
  it('a status change that read a legacy trade commits on the upgraded item', async () => {
    const trade = await legacyTrade(own);
    const transactions = { count: 0 };
    const changing = beforeFirstTransaction(
      own,
      async () => {
        let position: Record<string, unknown> | undefined;
        do position = await migration.page(own, {}, position, noProgress());
        while (position !== undefined);
      },
      transactions,
    );
    expect(await updateTrade(changing, trade, ['accepted'], ACTIVATE, own.clock.nowMs())).toBe(true);
    expect(transactions.count).toBe(1);
    const item = (await stored(own, tradeEntity.key({ trade_id: trade.trade_id })))!;
    expect([item.item_version, item.status_sequence].map(num)).toEqual([2, 2]);
    expect(item.visible_to).toEqual(['PLAT01']);
  });
});

describe('migration 0002-item-versions over the whole table', () => {
  it('upgrades system accounts too, and the ledger check finds the same before and after', {
    timeout: 120_000,
  }, async () => {
    // Tables of its own: the whole-table run is recorded once per table.
    const whole = ownTableNames('item-versions-whole');
    await createStreamFreeTables(testEndpoint(), whole);
    const on = testContext({ tables: whole });
    const { code, account } = await platformWithItems(on);
    // An escrow account (guarded, unversioned), credited from the platform's account.
    const escrow = awardsEscrowAccount(code, 'USD', 0).account;
    await bookMovement(on, {
      movement_id: randomUUID(),
      type: 'award_escrow',
      reference: 'item versions',
      legs: [
        { account, platform_code: code, amount: new Money('-0.5') },
        { account: escrow, platform_code: null, amount: new Money('0.5') },
      ],
    });
    const shardKeys = Array.from({ length: OUTSIDE_ACCOUNT_SHARDS }, (_, shard) =>
      accountShardEntity.key({ ...systemAccount(BOUNDARY, 'deposits', 'USD'), shard }),
    );
    const systemKeys = [accountEntity.key(escrow), ...shardKeys];
    const systemItems = async () =>
      (await Promise.all(systemKeys.map((key) => stored(on, key)))).filter((item) => item !== undefined);
    for (const item of await systemItems())
      await makeLegacy(on, { pk: item!.pk, sk: item!.sk }, ['item_version', 'version', 'movement_count']);
    // An account no booking numbered: the check can't replay it, before or after.
    await makeLegacy(on, accountEntity.key(account), ['item_version', 'version', 'movement_count']);
    const trade = await legacyTrade(on);

    const kinds = async () => {
      const { discrepancies } = await runLedgerCheck(on, { scope: {}, totalSegments: 1 });
      // Written before versions: its history can't be replayed, so the check leaves it alone, upgraded or not.
      expect(discrepancies.filter((found) => found.account_id === accountIdOf(account))).toEqual([]);
      return discrepancies.map((found) => found.kind).sort();
    };
    const before = await kinds();
    const done = (await runAdmin(['migrate', 'run', ITEM_VERSIONS, '--reason', 'item versions'], { ctx: on })) as any;
    expect(done).toMatchObject({ scope: 'table', outcome: 'applied' });
    expect(done.progress.migrated).toBe((await systemItems()).length + 2);
    const upgradedTrade = (await stored(on, tradeEntity.key({ trade_id: trade.trade_id })))!;
    expect([upgradedTrade.item_version, upgradedTrade.status_sequence].map(num)).toEqual([2, 1]);
    expect(upgradedTrade.visible_to).toEqual(['PLAT01']);
    for (const item of await systemItems())
      expect([item!.item_version, item!.version, item!.movement_count].map(num)).toEqual([2, 0, 0]);
    expect(await kinds()).toEqual(before);
    const listed = (await runAdmin(['migrate', 'list'], { ctx: on })) as any;
    expect(listed.migrations.find((found: any) => found.name === ITEM_VERSIONS)).toMatchObject({
      applied: true,
      status: 'applied',
    });
  });
});
