import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { BatchWriteCommand, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { runAdmin } from '../../infra/ops/cli.js';
import { UsageError } from '../../infra/ops/command.js';
import { awardsEscrowAccount, resumeDistribution } from '../../lib/awards/distribute-awards.js';
import type { AppContext } from '../../lib/context.js';
import { chunked, distributionFingerprint, recipientsPerChunk } from '../../lib/domain/awards.js';
import { accountIdOf, moveLegs, type AccountRef, type Movement } from '../../lib/domain/ledger.js';
import { Money } from '../../lib/domain/money.js';
import { deposit } from '../../lib/ledger/deposit.js';
import { listMovements } from '../../lib/movements/list-movements.js';
import { runLedgerCheck } from '../../lib/reconciliation/run-ledger-check.js';
import {
  distributionCreationItems,
  getDistribution,
  type Distribution,
  type DistributionChunk,
} from '../../lib/store/awards.js';
import { bookMovement } from '../../lib/ledger/engine.js';
import { movementRecordItems } from '../../lib/store/movements.js';
import { counterUpdates, readCount } from '../../lib/store/table/counters.js';
import { accountEntity, movementAccountEntryEntity } from '../../lib/store/entities/ledger.js';
import { balanceOf, MOVEMENTS_LIST, openedAccountItem } from '../../lib/store/ledger.js';
import {
  ConcurrentMigrationRunError,
  findMigration,
  ITEM_VERSIONS,
  TRADE_LIST_ENTRIES,
  migrationRuns,
  MOVEMENT_ACCOUNT_ENTRIES,
  runMigration,
} from '../../lib/store/migrations/index.js';
import { createPlatform } from '../../lib/store/platforms.js';
import { MAX_TRANSACTION_ITEMS, type CountChange } from '../../lib/store/table/transaction-items.js';
import { customersViaStore } from '../support/customers.js';
import { fund } from '../support/ledger.js';
import { newPlatform, type TestPlatform } from '../support/service.js';
import { clientWith, ctx, testContext, testEndpoint } from '../support/context.js';
import { dropResponse } from '../support/raw-response.js';
import { createStreamFreeTables, ownTableNames } from '../support/tables.js';

/**
 * Migrations (docs/operations.md, "Migrations"), on items written the old way: movement records without their account
 * entries, accounts without `movement_count`, platforms' movement counters without those movements.
 */

const REPO = resolve(import.meta.dirname, '..', '..');
const NAME = MOVEMENT_ACCOUNT_ENTRIES;
const migration = findMigration(NAME)!;

const usd = (participantCode: string, platformCode: string, label = 'general'): AccountRef => ({
  participant_code: participantCode,
  account_group: platformCode,
  account_label: label,
  asset: 'USD',
});

async function batchWrite(on: AppContext, items: Record<string, unknown>[]): Promise<void> {
  const batches = Array.from({ length: Math.ceil(items.length / 25) }, (_, i) => items.slice(i * 25, i * 25 + 25));
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let batch = batches.shift(); batch; batch = batches.shift()) {
        let pending: any[] | undefined = batch.map((Item) => ({ PutRequest: { Item } }));
        while (pending && pending.length > 0) {
          const out: { UnprocessedItems?: Record<string, any[]> } = await on.db.send(
            new BatchWriteCommand({ RequestItems: { [on.tables.main]: pending } }),
          );
          pending = out.UnprocessedItems?.[on.tables.main];
        }
      }
    }),
  );
}

/**
 * `count` movements of 1 USD back and forth between two accounts (so both end at 0), at `startMs`, `startMs + 1`, ...
 * The old way (`oldWay`): the records alone (as `movementRecordItems` writes them, minus the entries), not
 * counted, and the accounts without `movement_count`. Otherwise as a booking writes them: entries, counts.
 */
async function writeHistory(
  on: AppContext,
  platformCode: string,
  between: [AccountRef, AccountRef],
  count: number,
  startMs: number,
  oldWay: boolean,
): Promise<string[]> {
  const items: Record<string, unknown>[] = [];
  const counts: CountChange[] = [];
  const ids: string[] = [];
  for (let index = 0; index < count; index++) {
    const [from, to] = index % 2 === 0 ? between : [between[1], between[0]];
    const movement: Movement = {
      movement_id: randomUUID(),
      type: 'transfer',
      reference: `history-${index}`,
      legs: moveLegs(
        { account: from, platform_code: platformCode },
        { account: to, platform_code: platformCode },
        new Money(1),
      ),
    };
    ids.push(movement.movement_id);
    const written = movementRecordItems(on, movement, startMs + index);
    for (const tagged of oldWay ? written.slice(0, 1) : written)
      items.push(tagged.item.Put!.Item as Record<string, unknown>);
    if (!oldWay) counts.push(...(written[0]!.counts ?? []));
  }
  for (const account of between) {
    const tagged = openedAccountItem(on, account, platformCode, new Money(0), startMs, count);
    const opened = tagged.item.Put!.Item as Record<string, unknown>;
    if (oldWay) {
      // Written before accounts carried a movement count, and before item versions.
      delete opened.movement_count;
      delete opened.item_version;
    }
    items.push(opened);
    counts.push(...(tagged.counts ?? []));
  }
  await batchWrite(on, items);
  for (const update of counterUpdates(on, counts)) await on.db.send(new UpdateCommand(update.Update!));
  return ids;
}

async function movementCountOf(on: AppContext, account: AccountRef): Promise<number | undefined> {
  const out = await on.db.send(
    new GetCommand({ TableName: on.tables.main, Key: accountEntity.key(account), ConsistentRead: true }),
  );
  return out.Item?.movement_count === undefined ? undefined : Number(out.Item.movement_count);
}

/** The account's entries as stored (its own index partition, counted). */
async function entriesOf(on: AppContext, account: AccountRef): Promise<number> {
  let total = 0;
  let ExclusiveStartKey: Record<string, any> | undefined;
  do {
    const out = await on.db.send(
      new QueryCommand({
        TableName: on.tables.main,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: {
          ':pk': movementAccountEntryEntity.indexPartition('gsi1', { account_id: accountIdOf(account) }),
        },
        Select: 'COUNT',
        ExclusiveStartKey,
      }),
    );
    total += out.Count ?? 0;
    ExclusiveStartKey = out.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return total;
}

/** Every movement id of a list, following next_cursor. */
async function walk(platform: TestPlatform, path: string): Promise<string[]> {
  const seen: string[] = [];
  const query = `${path}${path.includes('?') ? '&' : '?'}page_size=100`;
  let next = query;
  for (let guard = 0; guard < 100; guard++) {
    const response = await platform.get(next);
    expect(response.status, response.text).toBe(200);
    seen.push(...response.body.message.map((movement: any) => movement.movement_id));
    if (response.body.next_cursor === null) return seen;
    next = `${query}&cursor=${encodeURIComponent(response.body.next_cursor)}`;
  }
  throw new Error(`${path}: no end after 100 pages`);
}

describe('migration 0001-movement-account-entries', () => {
  it('gives old movements their entries, counts and platform count; GET /movements?account_id= then reads full pages from the account', {
    timeout: 240_000,
  }, async () => {
    const platform = await newPlatform();
    const [alice, bob, carol, dan] = await customersViaStore(platform.platformCode, 4);
    const quiet = usd(alice!, platform.platformCode);
    const nowMs = ctx.clock.nowMs();
    // Alice and Bob's 250 movements are old (no entries, not counted) and older than the platform's 1,010
    // others (Carol and Dan's, booked with entries), so the platform's list filtered by Alice's account
    // reads its whole budget before reaching hers.
    const old = await writeHistory(
      ctx,
      platform.platformCode,
      [quiet, usd(bob!, platform.platformCode)],
      250,
      nowMs - 100_000,
      true,
    );
    await writeHistory(
      ctx,
      platform.platformCode,
      [usd(carol!, platform.platformCode), usd(dan!, platform.platformCode)],
      1_010,
      nowMs - 50_000,
      false,
    );

    const before = await platform.get(`/movements?account_id=${accountIdOf(quiet)}&page_size=50`);
    expect(before.status, before.text).toBe(200);
    expect(before.body.message.length).toBeLessThan(50);
    expect((await platform.get(`/accounts/${accountIdOf(quiet)}/movements`)).body.count).toBe(0);
    expect(await readCount(ctx, platform.platformCode, MOVEMENTS_LIST)).toBe(1_010);

    // Interrupted after its first page (a signal, as Ctrl-C): the run is recorded where it stopped.
    const stop = new AbortController();
    const stopped = await runMigration(ctx, migration, {
      platformCode: platform.platformCode,
      operator: 'test',
      reason: 'deploy',
      signal: stop.signal,
      onProgress: () => stop.abort(),
    });
    expect(stopped.outcome).toBe('stopped');
    expect(stopped.run).toMatchObject({
      status: 'running',
      operator: 'test',
      reason: 'deploy',
      progress: { pages: 1 },
    });
    expect(stopped.run.position).not.toBeNull();

    // Run again through the CLI: it continues there and finishes; once more, it says it is done.
    const finished = (await runAdmin(
      ['migrate', 'run', NAME, '--platform', platform.platformCode, '--reason', 'deploy, continued'],
      { ctx },
    )) as any;
    expect(finished).toMatchObject({
      migration: NAME,
      scope: platform.platformCode,
      outcome: 'applied',
      run: { status: 'applied', last_run: { reason: 'deploy, continued' } },
    });
    expect(finished.progress.pages).toBeGreaterThanOrEqual(13);
    expect(finished.progress.written).toBe(500);
    expect(finished.progress.migrated).toBe(250);
    const again = (await runAdmin(['migrate', 'run', NAME, '--platform', platform.platformCode, '--reason', 'again'], {
      ctx,
    })) as any;
    expect(again).toMatchObject({ outcome: 'already applied', progress: finished.progress });

    // Exact: every account's count is its entries; the platform counts every movement once.
    expect(await movementCountOf(ctx, quiet)).toBe(250);
    expect(await entriesOf(ctx, quiet)).toBe(250);
    expect(await movementCountOf(ctx, usd(carol!, platform.platformCode))).toBe(1_010);
    expect(await readCount(ctx, platform.platformCode, MOVEMENTS_LIST)).toBe(1_260);

    // GET /movements?account_id= reads Alice's own list: full pages, the exact count, every movement once.
    const page = await platform.get(`/movements?account_id=${accountIdOf(quiet)}&page_size=50`);
    expect(page.status, page.text).toBe(200);
    expect(page.body).toMatchObject({ count: 250, total_pages: 5 });
    expect(page.body.message).toHaveLength(50);
    expect(page.body.message[0].changes.map((change: any) => change.account_id)).toContain(accountIdOf(quiet));
    const byAccount = await walk(platform, `/movements?account_id=${accountIdOf(quiet)}`);
    expect(new Set(byAccount)).toEqual(new Set(old));
    expect(byAccount).toHaveLength(250);
    const own = await platform.get(`/accounts/${accountIdOf(quiet)}/movements?page_size=100`);
    expect(own.body).toMatchObject({ count: 250, total_pages: 3 });
    expect(own.body.message).toHaveLength(100);
    expect(await walk(platform, `/accounts/${accountIdOf(quiet)}/movements`)).toHaveLength(250);
    expect((await platform.get('/movements?page_size=1')).body.count).toBe(1_260);

    // Combined filters: implied by the account (its owner, its asset) or on its entries (type, time) read its
    // list; another participant's or asset's go to the platform's list, as before.
    expect(
      (
        await platform.get(
          `/movements?account_id=${accountIdOf(quiet)}&participant_code=${alice}&asset=USD&movement_type=transfer&page_size=10`,
        )
      ).body,
    ).toMatchObject({ count: 250 });
    const bounded = await platform.get(
      `/movements?account_id=${accountIdOf(quiet)}&movement_timestamp[gte]=${nowMs - 100_000 + 200}&page_size=100`,
    );
    expect(bounded.body).toMatchObject({ count: 50 });
    expect(bounded.body.message).toHaveLength(50);
    expect(
      (await platform.get(`/movements?account_id=${accountIdOf(quiet)}&movement_type=deposit`)).body,
    ).toMatchObject({ message: [], count: 0 });
    const withBob = await platform.get(
      `/movements?account_id=${accountIdOf(quiet)}&participant_code=${bob}&page_size=100`,
    );
    expect(withBob.status, withBob.text).toBe(200);
    expect(withBob.body.message.length).toBeLessThan(100);

    // `migrate list` shows the platform's run.
    const listed = (await runAdmin(['migrate', 'list'], { ctx })) as any;
    const entry = listed.migrations.find((m: any) => m.name === NAME);
    expect(entry.platforms).toContainEqual(
      expect.objectContaining({
        platform_code: platform.platformCode,
        status: 'applied',
        operator: 'test',
        reason: 'deploy',
        progress: finished.progress,
      }),
    );
  });

  it('loses no increment of bookings made while it runs', { timeout: 240_000 }, async () => {
    // Two pages of the migration's scan: bookings land before, between and after them.
    const OLD = 200;
    const platform = await newPlatform();
    const [alice, bob] = await customersViaStore(platform.platformCode, 2);
    const busy = usd(alice!, platform.platformCode);
    await writeHistory(
      ctx,
      platform.platformCode,
      [busy, usd(bob!, platform.platformCode)],
      OLD,
      ctx.clock.nowMs() - 100_000,
      true,
    );
    let running = true;
    const deposits = (async () => {
      let made = 0;
      while (running || made < 10) {
        await deposit(ctx, { reference: `live-${randomUUID()}`, participantCode: alice!, asset: 'USD', amount: '1' });
        made += 1;
      }
      return made;
    })();
    await runMigration(ctx, migration, {
      platformCode: platform.platformCode,
      operator: 'test',
      reason: 'while serving',
    });
    running = false;
    const live = await deposits;
    expect(await movementCountOf(ctx, busy)).toBe(OLD + live);
    expect(await entriesOf(ctx, busy)).toBe(OLD + live);
    expect(await readCount(ctx, platform.platformCode, MOVEMENTS_LIST)).toBe(OLD + live);
    expect((await balanceOf(ctx, busy)).toFixed()).toBe(String(live));
    const listed = await platform.get(`/movements?account_id=${accountIdOf(busy)}&page_size=100`);
    expect(listed.body).toMatchObject({ count: OLD + live });
    expect(listed.body.message).toHaveLength(100);
  });

  it('crashing after a commit, before saving its position, then run again: nothing doubled', {
    timeout: 240_000,
  }, async () => {
    const platform = await newPlatform();
    const [alice, bob] = await customersViaStore(platform.platformCode, 2);
    const accounts: [AccountRef, AccountRef] = [usd(alice!, platform.platformCode), usd(bob!, platform.platformCode)];
    await writeHistory(ctx, platform.platformCode, accounts, 300, ctx.clock.nowMs() - 100_000, true);
    let transactions = 0;
    const crashing = clientWith(
      (next: any, context: any) => async (args: any) => {
        const result = await next(args);
        if (context.commandName === 'TransactWriteItemsCommand' && ++transactions === 130) {
          dropResponse(result);
          throw new Error('the process died after this commit');
        }
        return result;
      },
      'crash-after-commit',
      'deserialize',
      { maxAttempts: 1 },
    );
    const failed = await runMigration(testContext({ db: crashing }), migration, {
      platformCode: platform.platformCode,
      operator: 'test',
      reason: 'first try',
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(String(failed)).toContain('the process died');
    const [stored] = (await migrationRuns(ctx, NAME)).filter((run) => run.scope === platform.platformCode);
    expect(stored).toMatchObject({ status: 'running' });

    const resumed = await runMigration(ctx, migration, {
      platformCode: platform.platformCode,
      operator: 'test',
      reason: 'second try',
    });
    expect(resumed.outcome).toBe('applied');
    expect(resumed.progress.already).toBeGreaterThan(0);
    for (const account of accounts) {
      expect(await movementCountOf(ctx, account)).toBe(300);
      expect(await entriesOf(ctx, account)).toBe(300);
    }
    expect(await readCount(ctx, platform.platformCode, MOVEMENTS_LIST)).toBe(300);
  });

  it('two runs at once: one finishes, the other stops or finds it done; nothing doubled', {
    timeout: 240_000,
  }, async () => {
    const platform = await newPlatform();
    const [alice, bob] = await customersViaStore(platform.platformCode, 2);
    const accounts: [AccountRef, AccountRef] = [usd(alice!, platform.platformCode), usd(bob!, platform.platformCode)];
    await writeHistory(ctx, platform.platformCode, accounts, 300, ctx.clock.nowMs() - 100_000, true);
    const outcomes = await Promise.allSettled(
      ['one', 'two'].map((who) =>
        runMigration(testContext(), migration, {
          platformCode: platform.platformCode,
          operator: who,
          reason: 'at once',
        }),
      ),
    );
    const finished = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value.outcome] : []));
    const stopped = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : []));
    expect(finished.length).toBeGreaterThanOrEqual(1);
    for (const reason of stopped) expect(reason).toBeInstanceOf(ConcurrentMigrationRunError);
    const [run] = (await migrationRuns(ctx, NAME)).filter((stored) => stored.scope === platform.platformCode);
    expect(run).toMatchObject({ status: 'applied' });
    for (const account of accounts) {
      expect(await movementCountOf(ctx, account)).toBe(300);
      expect(await entriesOf(ctx, account)).toBe(300);
    }
    expect(await readCount(ctx, platform.platformCode, MOVEMENTS_LIST)).toBe(300);
  });

  it('over the whole table: applied once, listed as applied, then every platform reads account lists', {
    timeout: 240_000,
  }, async () => {
    // Tables of its own: a whole-table run scans everything in them.
    const tables = ownTableNames('migrate');
    await createStreamFreeTables(testEndpoint(), tables);
    const own = testContext({ tables });
    const platform = await createPlatform(own, 'migrating', '0');
    const accounts: [AccountRef, AccountRef] = [
      usd(platform.participant_code, platform.platform_code, 'a'),
      usd(platform.participant_code, platform.platform_code, 'b'),
    ];
    await writeHistory(own, platform.platform_code, accounts, 120, own.clock.nowMs() - 10_000, true);

    const kinds = async () =>
      [
        ...new Set(
          (await runLedgerCheck(own, { scope: {}, totalSegments: 1 })).discrepancies.map((found) => found.kind),
        ),
      ].sort();
    // The ledger check sees what is missing: versions without entries, the movements counter short.
    expect(await kinds()).toEqual(['account_version', 'counter']);
    const notYet = (await runAdmin(['migrate', 'list'], { ctx: own })) as any;
    expect(notYet.migrations).toEqual([
      expect.objectContaining({ name: NAME, applied: false, status: 'not run', platforms: [] }),
      expect.objectContaining({ name: ITEM_VERSIONS, applied: false, status: 'not run', platforms: [] }),
      expect.objectContaining({ name: TRADE_LIST_ENTRIES, applied: false, status: 'not run', platforms: [] }),
    ]);
    const done = (await runAdmin(['migrate', 'run', NAME, '--reason', 'deploy 2026-11-27'], { ctx: own })) as any;
    expect(done).toMatchObject({ scope: 'table', outcome: 'applied', progress: { migrated: 120, written: 240 } });
    const listed = (await runAdmin(['migrate', 'list'], { ctx: own })) as any;
    expect(listed.migrations[0]).toMatchObject({
      name: NAME,
      applied: true,
      status: 'applied',
      run: { reason: 'deploy 2026-11-27', progress: { migrated: 120 } },
    });
    expect(await movementCountOf(own, accounts[0])).toBe(120);
    expect(await readCount(own, platform.platform_code, MOVEMENTS_LIST)).toBe(120);
    expect((await runAdmin(['migrate', 'run', NAME, '--reason', 'again'], { ctx: own })) as any).toMatchObject({
      outcome: 'already applied',
    });
    // And nothing after: entries, counts and counters agree (this history was written without balance events).
    expect(await kinds()).toEqual(['balance_events']);

    // A fresh context (another Lambda container) finds the record and reads the account's own list.
    const fresh = testContext({ tables });
    const page = await listMovements(fresh, platform.platform_code, {
      account_id: accountIdOf(accounts[0]),
      page: 1,
      page_size: 50,
    });
    expect(page).toMatchObject({ count: 120, total_pages: 3 });
    expect(page.message).toHaveLength(50);
    expect(fresh.caches.migrations.get(`${NAME}#${platform.platform_code}`)).toMatchObject({ applied: true });
  });
});

describe('migrate CLI: bad input', () => {
  it('an unknown name or none is a usage error, with nothing written', async () => {
    for (const [argv, problem] of [
      [
        ['migrate', 'run', 'no-such-migration', '--reason', 'r'],
        /unknown migration 'no-such-migration' \(known: 0001-movement-account-entries, 0002-item-versions, 0003-trade-list-entries\)/,
      ],
      [['migrate', 'run', '--reason', 'r'], /NAME is required/],
      [['migrate', 'run', NAME, 'extra', '--reason', 'r'], /unexpected argument 'extra'/],
      [['migrate', 'run', NAME], /--reason is required/],
      [
        ['migrate', 'run', NAME, '--platform', 'NOSUCHPLATFORM', '--reason', 'r'],
        /--platform: no platform NOSUCHPLATFORM/,
      ],
    ] as const) {
      const failure = await runAdmin([...argv], { ctx }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure, argv.join(' ')).toBeInstanceOf(UsageError);
      expect((failure as Error).message).toMatch(problem);
      expect((failure as Error).message).toContain(
        'usage: npm run admin -- migrate run NAME [--platform CODE] --reason TEXT',
      );
    }
    expect(await migrationRuns(ctx, 'no-such-migration')).toEqual([]);
    expect((await migrationRuns(ctx, NAME)).filter((run) => run.scope === 'NOSUCHPLATFORM')).toEqual([]);
  });

  it('exits 2 on an unknown name (the real entry point, before connecting to anything)', () => {
    const run = spawnSync(
      'node_modules/.bin/tsx',
      ['infra/local/admin.ts', 'migrate', 'run', 'no-such-migration', '--reason', 'r'],
      { cwd: REPO, encoding: 'utf8', timeout: 60_000 },
    );
    expect(run.status, run.stderr).toBe(2);
    expect(run.stderr).toContain("unknown migration 'no-such-migration'");
  });
});

describe('award distributions recorded with an older, larger chunk size', () => {
  it('are finished on resume: an oversized chunk credited in parts, each recipient once, even by two resumes at once', {
    timeout: 240_000,
  }, async () => {
    const platform = await newPlatform();
    const oldChunkSize = 40;
    // What crediting such a chunk in one transaction would need: more than DynamoDB's 100 items.
    expect(oldChunkSize).toBeGreaterThan(recipientsPerChunk(MAX_TRANSACTION_ITEMS));
    const codes = await customersViaStore(platform.platformCode, 45);
    await fund(platform.participantCode, 'BTC', '1', 'awards');
    // Recorded as an older release did: chunks of 40, all paying from the first escrow lane.
    const nowMs = ctx.clock.nowMs();
    const requestId = randomUUID();
    const escrow = awardsEscrowAccount(platform.platformCode, 'BTC', 0);
    const pool = {
      account: usd(platform.participantCode, platform.platformCode, 'awards'),
      platform_code: platform.platformCode,
    };
    pool.account.asset = 'BTC';
    const chunks = chunked(
      codes.map((code) => ({ participant_code: code, trade_id: randomUUID() })),
      oldChunkSize,
    ).map(
      (recipients, index): DistributionChunk => ({
        index,
        recipients,
        movement_id: randomUUID(),
        escrow: escrow.account,
        status: 'pending',
        credited_at: null,
      }),
    );
    const distribution: Distribution = {
      platform_code: platform.platformCode,
      distribution_id: requestId,
      asset: 'BTC',
      quantity: '0.00100000',
      quoted_currency: 'USD',
      recipient_count: codes.length,
      total: '0.04500000',
      fingerprint: distributionFingerprint({
        asset: 'BTC',
        quantity: new Money('0.001'),
        quotedCurrency: 'USD',
        participantCodes: codes,
      }),
      pool: pool.account,
      escrow: escrow.account,
      chunk_count: chunks.length,
      status: 'distributing',
      created_at: nowMs,
      completed_at: null,
    };
    const escrowMovement: Movement = {
      movement_id: randomUUID(),
      type: 'award_escrow',
      reference: `award_distribution:${platform.platformCode}:${requestId}`,
      legs: moveLegs(pool, escrow, new Money('0.045')),
    };
    await bookMovement(ctx, escrowMovement, distributionCreationItems(ctx, distribution, chunks), nowMs);
    expect(
      (await getDistribution(ctx, platform.platformCode, requestId))!.chunks.map((chunk) => chunk.recipients.length),
    ).toEqual([40, 5]);

    const [first, second] = await Promise.all([
      resumeDistribution(ctx, platform.platformCode, requestId),
      resumeDistribution(ctx, platform.platformCode, requestId),
    ]);
    expect(first.confirms.map((confirm) => confirm.participant_code)).toEqual(codes);
    expect(second.confirms).toEqual(first.confirms);
    const stored = (await getDistribution(ctx, platform.platformCode, requestId))!;
    expect(stored.distribution.status).toBe('completed');
    expect(stored.chunks.map((chunk) => chunk.status)).toEqual(['credited', 'credited']);
    expect(stored.chunks[0]!.credited_recipients).toBe(40);
    const paid = await Promise.all(
      codes.map((code) =>
        balanceOf(ctx, {
          participant_code: code,
          account_group: platform.platformCode,
          account_label: 'general',
          asset: 'BTC',
        }),
      ),
    );
    expect(paid.map((balance) => balance.toFixed())).toEqual(codes.map(() => '0.001'));
    expect((await balanceOf(ctx, escrow.account)).toFixed()).toBe('0');
    // One trade per recipient, each resolvable.
    const trade = await platform.get(`/trades/${chunks[0]!.recipients[39]!.trade_id}`);
    expect(trade.status, trade.text).toBe(200);
  });
});
