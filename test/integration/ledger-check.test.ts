import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { NumberValue, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { runAdmin } from '../../infra/ops/cli.js';
import { exitCodeOf, UsageError } from '../../infra/ops/command.js';
import { accountIdOf, SYSTEM_PARTICIPANTS, systemAccount } from '../../lib/domain/ledger.js';
import { counterShardEntity } from '../../lib/store/entities/counter.js';
import { accountEntity, movementEntity } from '../../lib/store/entities/ledger.js';
import {
  runLedgerCheck,
  type CheckpointStore,
  type LedgerCheckReport,
} from '../../lib/reconciliation/run-ledger-check.js';
import { customersViaHttp } from '../support/customers.js';
import { transferBody } from '../support/ledger.js';
import { setPrice } from '../support/pricing.js';
import { newPlatform, serviceFor, type TestPlatform } from '../support/service.js';
import { testContext, testEndpoint } from '../support/context.js';
import { createStreamFreeTables, ownTableNames, TEST_SECRETS_KEY } from '../support/tables.js';

/**
 * The ledger check on tables of this file's own: a check scoped to a platform (`--platform`) still scans the
 * whole table, and the shared test table holds the whole run's items. Every check here is scoped to a
 * platform of its test all the same (its accounts, entries, events, movements and counters), as ops run it
 * while the service books.
 */
const REPO = resolve(import.meta.dirname, '..', '..');
const tables = ownTableNames('ledger-check');
const ctx = testContext({ tables });
const home = serviceFor(ctx);

// Nothing here reads the stream: tables without it write at full speed however late in the run they are made.
beforeAll(async () => {
  await createStreamFreeTables(testEndpoint(), tables);
});
const check = async (platformCode: string, ...more: string[]) =>
  (await runAdmin(['ledger', 'check', '--platform', platformCode, ...more], { ctx })) as LedgerCheckReport;

/** The real entry point, on the test tables (or others) through the environment the CLI reads for deployed tables. */
function adminProcess(args: string[], env: Record<string, string> = {}) {
  return spawnSync('node_modules/.bin/tsx', ['infra/local/admin.ts', ...args], {
    cwd: REPO,
    encoding: 'utf8',
    timeout: 120_000,
    env: {
      ...process.env,
      TABLE_NAME: tables.main,
      TTL_TABLE_NAME: tables.ttl,
      DYNAMODB_ENDPOINT: testEndpoint(),
      SECRETS_LOCAL_KEY: TEST_SECRETS_KEY,
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      LOG_LEVEL: 'error',
      ...env,
    },
  });
}

/** Deposits through the ops CLI, as an operator books a wire. */
async function deposit(participantCode: string, asset: string, amount: string, label?: string) {
  await runAdmin(
    [
      'deposit',
      '--participant',
      participantCode,
      '--asset',
      asset,
      '--amount',
      amount,
      '--reference',
      `wire-${randomUUID()}`,
      '--reason',
      'test wire',
      ...(label ? ['--account-label', label] : []),
    ],
    { ctx },
  );
}

async function ok(response: Promise<{ status: number; text: string; body: any }>, status = 201) {
  const answered = await response;
  expect(answered.status, answered.text).toBe(status);
  return answered.body;
}

/**
 * A platform with money moved every way a platform moves it: deposits, transfers, rewards, a quote execution.
 * What doesn't depend on another booking runs at once: the deposits with the customers' onboarding, then every
 * booking that needs only the deposits, then the customer-to-customer transfer once the first customer holds
 * money.
 */
async function busyPlatform(): Promise<{ platform: TestPlatform; customers: string[] }> {
  const platform = await newPlatform({ on: home });
  const [customers] = await Promise.all([
    customersViaHttp(platform, 2),
    deposit(platform.participantCode, 'USD', '100000'),
    deposit(platform.participantCode, 'USD', '250.25', 'savings'),
  ]);
  await Promise.all([
    ...Array.from({ length: 4 }, () => ok(platform.post('/transfers', transferBody(platform, { amount: '10.00' })))),
    ok(
      platform.post(
        '/transfers',
        transferBody(platform, {
          to_participant_code: customers[0],
          to_account_group: platform.platformCode,
          to_account_label: 'general',
          amount: '500.00',
        }),
      ),
    ).then(() =>
      ok(
        platform.post(
          '/transfers',
          transferBody(platform, {
            from_participant_code: customers[0],
            to_participant_code: customers[1],
            amount: '5.00',
          }),
        ),
      ),
    ),
    ok(
      platform.post(
        '/transfers',
        transferBody(platform, {
          to_participant_code: customers[1],
          to_account_group: platform.platformCode,
          to_account_label: 'general',
          amount: '300.00',
        }),
      ),
    ),
    ...customers.map((customer) =>
      ok(
        platform.post('/rewards', {
          underlying: 'ETH',
          quoted_currency: 'USD',
          quantity: '0.01',
          participant_code: customer,
        }),
      ),
    ),
    ok(
      platform.get(
        `/liquidity/rfq?${new URLSearchParams({ side: 'buy', underlying: 'ETH', quoted_currency: 'USD', quantity: '0.1' })}`,
      ),
      200,
    ).then((quote) => ok(platform.post('/liquidity/execute', { quote_id: quote.message.quote_id }), 200)),
  ]);
  return { platform, customers };
}

/**
 * The busy platform of the two tests that only read it (a check, and a check interrupted and resumed): built
 * once, by whichever runs first. Each build took 19-20 s in the suite (DynamoDB Local shared with another file).
 */
let busy: ReturnType<typeof busyPlatform> | undefined;
const sharedBusyPlatform = () => (busy ??= busyPlatform());

beforeAll(async () => {
  await setPrice('ETH', 'USD', '2000', ctx);
});

describe('npm run admin -- ledger check', () => {
  it('passes on a busy platform: every account, movement, balance event and counter of it holds', async () => {
    const { platform } = await sharedBusyPlatform();
    const report = await check(platform.platformCode);
    expect(report.discrepancies).toEqual([]);
    expect(report.unsettled).toEqual([]);
    expect(report).toMatchObject({ complete: true, clean: true, scope: { platformCode: platform.platformCode } });
    expect(exitCodeOf(report)).toBe(0);
    // What it covered: the platform's and customers' accounts, its movements and their events, its counters.
    expect(report.summary.accounts_checked).toBeGreaterThanOrEqual(6);
    expect(report.summary.movements_checked).toBeGreaterThanOrEqual(12);
    expect(report.summary.balance_events).toBe(report.summary.movement_entries);
    expect(report.summary.counters_checked).toBe(4);
    // A scoped run doesn't sum assets: other platforms' bookings move the system accounts meanwhile.
    expect(report.summary.assets_summed).toBe(0);
  });

  it('passes after a transfer under a grant: the copy listed for the debited platform is counted in its list', async () => {
    const [owner, grantee] = [await newPlatform({ on: home }), await newPlatform({ on: home })];
    await deposit(owner.participantCode, 'USD', '30');
    await runAdmin(
      [
        'relationship',
        'grant',
        '--platform',
        grantee.platformCode,
        '--participant',
        owner.participantCode,
        '--reason',
        'test',
      ],
      { ctx },
    );
    await ok(
      grantee.post('/transfers', {
        from_participant_code: owner.participantCode,
        from_account_group: owner.platformCode,
        to_participant_code: grantee.participantCode,
        asset: 'USD',
        amount: '10',
      }),
    );
    expect((await owner.get('/transfers')).body.count).toBe(1);
    for (const platform of [owner, grantee]) {
      const report = await check(platform.platformCode);
      expect(report.discrepancies, platform.platformCode).toEqual([]);
      expect(report.clean).toBe(true);
    }
  });

  it('names an account whose balance was changed behind the ledger, and exits 1', async () => {
    const platform = await newPlatform({ on: home });
    await deposit(platform.participantCode, 'USD', '100');
    await ok(platform.post('/transfers', transferBody(platform, { amount: '40.00' })));
    const account = {
      participant_code: platform.participantCode,
      account_group: platform.platformCode,
      account_label: 'savings',
      asset: 'USD',
    };
    expect((await check(platform.platformCode)).clean).toBe(true);

    await ctx.db.send(
      new UpdateCommand({
        TableName: ctx.tables.main,
        Key: accountEntity.key(account),
        UpdateExpression: 'SET balance = balance + :one',
        ExpressionAttributeValues: { ':one': 1 },
      }),
    );
    const report = await check(platform.platformCode);
    expect(report.clean).toBe(false);
    expect(exitCodeOf(report)).toBe(1);
    const accountId = accountIdOf(account);
    expect(report.discrepancies).toContainEqual(
      expect.objectContaining({ kind: 'account_balance', account_id: accountId, expected: '40', found: '41' }),
    );
    // Its latest balance event no longer says what the account holds either.
    expect(report.discrepancies).toContainEqual(
      expect.objectContaining({ kind: 'balance_events', account_id: accountId }),
    );
    expect(report.discrepancies.every((found) => found.account_id === accountId)).toBe(true);

    // The real entry point: the discrepancy printed with its id, exit status 1.
    const run = adminProcess(['ledger', 'check', '--platform', platform.platformCode, '--segments', '2']);
    expect(run.status, run.stderr).toBe(1);
    expect(run.stdout).toContain(accountId);
  });

  /** Catches: one item that doesn't parse (a writer's bug, a hand edit) failing the whole check instead of being named. */
  it('names an item it cannot read, and checks the rest', async () => {
    const platform = await newPlatform({ on: home });
    await deposit(platform.participantCode, 'USD', '100');
    const account = {
      participant_code: platform.participantCode,
      account_group: platform.platformCode,
      account_label: 'unreadable',
      asset: 'USD',
    };
    // A platform account whose balance is not a number, written directly.
    await ctx.db.send(
      new PutCommand({
        TableName: ctx.tables.main,
        Item: {
          ...accountEntity.key(account),
          type: 'account',
          item_version: 2,
          ...account,
          account_id: accountIdOf(account),
          platform_code: platform.platformCode,
          balance: 'lots',
          last_update: Date.now(),
          version: 1,
          movement_count: 1,
        },
      }),
    );
    const report = await check(platform.platformCode);
    expect(report.clean).toBe(false);
    expect(exitCodeOf(report)).toBe(1);
    const key = `${accountEntity.key(account).pk} / ACCOUNT`;
    expect(report.discrepancies).toEqual([
      expect.objectContaining({
        kind: 'unreadable_item',
        entity: 'account',
        key,
        platform_code: platform.platformCode,
        detail: expect.stringContaining(`account ${key} does not parse: balance:`),
      }),
    ]);
  });

  it('names a movement whose legs do not balance', async () => {
    const platform = await newPlatform({ on: home });
    await deposit(platform.participantCode, 'USD', '100');
    const movementId = randomUUID();
    const leg = (label: string, amount: string) => ({
      participant_code: platform.participantCode,
      account_group: platform.platformCode,
      account_label: label,
      asset: 'USD',
      platform_code: platform.platformCode,
      amount,
    });
    await ctx.db.send(
      new PutCommand({
        TableName: ctx.tables.main,
        Item: {
          ...movementEntity.key({ movement_id: movementId }),
          type: 'movement',
          movement_id: movementId,
          movement_type: 'transfer',
          reference: 'forged',
          created_at: Date.now(),
          legs: [leg('general', '-5'), leg('savings', '4.99')],
        },
      }),
    );
    const report = await check(platform.platformCode);
    expect(report.discrepancies).toContainEqual(
      expect.objectContaining({
        kind: 'movement_unbalanced',
        movement_id: movementId,
        asset: 'USD',
        expected: '0',
        found: '-0.01',
      }),
    );
    expect(exitCodeOf(report)).toBe(1);
  });

  it('names a list counter off by one', async () => {
    const platform = await newPlatform({ on: home });
    await deposit(platform.participantCode, 'USD', '100');
    await ok(platform.post('/transfers', transferBody(platform, { amount: '1.00' })));
    await ok(platform.post('/transfers', transferBody(platform, { amount: '2.00' })));
    await ctx.db.send(
      new UpdateCommand({
        TableName: ctx.tables.main,
        Key: counterShardEntity.key({
          platform_code: platform.platformCode,
          list: 'transfers',
          bucket: 'all',
          shard: 3,
        }),
        UpdateExpression: 'ADD #n :one SET #type = :type',
        ExpressionAttributeNames: { '#n': 'n', '#type': 'type' },
        ExpressionAttributeValues: { ':one': 1, ':type': 'counter' },
      }),
    );
    const report = await check(platform.platformCode);
    expect(report.discrepancies).toEqual([
      expect.objectContaining({
        kind: 'counter',
        counter: counterShardEntity.partitionKey({
          platform_code: platform.platformCode,
          list: 'transfers',
          bucket: 'all',
        }),
        expected: '2',
        found: '3',
      }),
    ]);
    expect(exitCodeOf(report)).toBe(1);
  });

  /**
   * Planted as a broken guard would leave them (as a security review found: with the guard broken a guarded account stood at
   * -82,385 and the check said nothing). Each balance is set behind the ledger, so the accounts are also off
   * against their entries; what matters here is the sign rule, which holds whatever the history says.
   * Catches: a debit's `balance >= amount` condition dropped (lib/ledger/batch.ts).
   */
  it('names a guarded account below zero with its id, in scoped and unscoped runs, and not the exempt ones', async () => {
    const platform = await newPlatform({ on: home });
    const [customer] = await customersViaHttp(platform, 1);
    await Promise.all([
      deposit(platform.participantCode, 'USD', '100'),
      deposit(platform.participantCode, 'USD', '30', 'ach_clearing'),
      // A customer's account that happens to carry the clearing label is guarded like any other.
      deposit(customer!, 'USD', '20', 'ach_clearing'),
    ]);
    const account = (participant: string, label: string) => ({
      participant_code: participant,
      account_group: platform.platformCode,
      account_label: label,
      asset: 'USD',
    });
    const general = account(platform.participantCode, 'general');
    const clearing = account(platform.participantCode, 'ach_clearing');
    const customerClearing = account(customer!, 'ach_clearing');
    expect((await check(platform.platformCode)).clean).toBe(true);

    const setBalance = (ref: ReturnType<typeof account>, balance: string) =>
      ctx.db.send(
        new UpdateCommand({
          TableName: ctx.tables.main,
          Key: accountEntity.key(ref),
          UpdateExpression: 'SET balance = :b',
          ExpressionAttributeValues: { ':b': NumberValue.from(balance) },
        }),
      );
    await setBalance(general, '-82385');
    // The platform's clearing account may go negative (through bank events): exempt.
    await setBalance(clearing, '-7.5');
    await setBalance(customerClearing, '-1');
    // A guarded system account (escrow) of no platform: an unscoped run names it.
    const escrow = systemAccount(SYSTEM_PARTICIPANTS.escrow, 'awards', 'SOL');
    await ctx.db.send(
      new PutCommand({
        TableName: ctx.tables.main,
        // A system account: in no index (no platform; its id left out of the parts, so no gsi2 entry either).
        Item: accountEntity.item(
          { ...escrow, account_id: accountIdOf(escrow), balance: '-3', last_update: Date.now() },
          { account_id: null },
        ),
      }),
    );

    const negatives = (report: LedgerCheckReport) =>
      report.discrepancies.filter((found) => found.kind === 'negative_balance').map((found) => found.account_id);
    const scoped = await check(platform.platformCode);
    expect(scoped.clean).toBe(false);
    expect(exitCodeOf(scoped)).toBe(1);
    expect(negatives(scoped).sort()).toEqual([accountIdOf(general), accountIdOf(customerClearing)].sort());
    expect(scoped.discrepancies).toContainEqual(
      expect.objectContaining({
        kind: 'negative_balance',
        account_id: accountIdOf(general),
        platform_code: platform.platformCode,
        found: '-82385',
      }),
    );

    // Unscoped: the escrow too; never the outside world's accounts (every deposit took the external boundary
    // below zero) nor the clearing account.
    const all = (await runAdmin(['ledger', 'check'], { ctx })) as LedgerCheckReport;
    expect(negatives(all)).toEqual(
      expect.arrayContaining([accountIdOf(general), accountIdOf(customerClearing), accountIdOf(escrow)]),
    );
    expect(negatives(all)).not.toContain(accountIdOf(clearing));
    expect(negatives(all)).toHaveLength(3);

    // The real entry point prints the id and exits 1.
    const run = adminProcess(['ledger', 'check', '--platform', platform.platformCode]);
    expect(run.status, run.stderr).toBe(1);
    expect(run.stdout).toContain(accountIdOf(general));
  });

  it('resumes an interrupted run where it stopped, to the same result', async () => {
    const { platform } = await sharedBusyPlatform();
    // Pages small enough that each segment takes several, whatever else the table holds: the busy platform
    // alone is about 120 items (at 50 a page, one page a segment, and the run would end before its third save).
    const PAGE_SIZE = 10;
    const full = await runLedgerCheck(ctx, {
      scope: { platformCode: platform.platformCode },
      totalSegments: 3,
      pageSize: PAGE_SIZE,
    });
    expect(full.clean).toBe(true);
    expect(full.summary.pages).toBeGreaterThan(2 * 3);

    let saved: unknown;
    let saves = 0;
    const stop = new AbortController();
    const checkpoint: CheckpointStore = {
      load: async () => saved,
      save: async (state) => {
        saved = JSON.parse(JSON.stringify(state));
        saves += 1;
        if (saves === 3) stop.abort();
      },
    };
    const first = await runLedgerCheck(ctx, {
      scope: { platformCode: platform.platformCode },
      totalSegments: 3,
      pageSize: PAGE_SIZE,
      checkpoint,
      signal: stop.signal,
      checkpointEveryMs: 0,
    });
    expect(first.complete).toBe(false);
    const resumed = await runLedgerCheck(ctx, {
      scope: { platformCode: platform.platformCode },
      totalSegments: 3,
      pageSize: PAGE_SIZE,
      checkpoint,
    });
    expect(resumed).toMatchObject({ complete: true, clean: true, summary: { resumed: true } });
    // What the platform's scope holds (items_scanned counts the whole table, which other files write to meanwhile).
    for (const field of [
      'accounts_checked',
      'movement_entries',
      'movements_checked',
      'balance_events',
      'counters_checked',
    ] as const) {
      expect(resumed.summary[field], field).toBe(full.summary[field]);
    }
    // A resume file of another run (here: another platform's scope) is refused rather than mixed in.
    const file = join(mkdtempSync(join(inject('scratchDir'), 'ledger-check-')), 'resume.json');
    writeFileSync(file, JSON.stringify({ ...(saved as object), completed: false }));
    await expect(runAdmin(['ledger', 'check', '--segments', '3', '--resume', file], { ctx })).rejects.toThrow(
      /resume file is a run with scope/,
    );
  });

  it('refuses bad flags with its usage (exit 2), before reading anything', async () => {
    for (const argv of [['--segments', '0'], ['--segments', 'x'], ['--segments', '65'], ['--platfrom', 'X'], ['now']]) {
      await expect(runAdmin(['ledger', 'check', ...argv], { ctx }), argv.join(' ')).rejects.toBeInstanceOf(UsageError);
    }
    const run = adminProcess(['ledger', 'check', '--segments', '0']);
    expect(run.status, run.stderr).toBe(2);
    expect(run.stderr).toContain('usage: npm run admin -- ledger check');
  });

  it('exits 2 with a clear message on an unreachable endpoint or a wrong table name, writing nothing', () => {
    const dir = mkdtempSync(join(inject('scratchDir'), 'ledger-check-'));
    const unreachable = adminProcess(['ledger', 'check', '--resume', join(dir, 'a.json')], {
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:9',
      AWS_MAX_ATTEMPTS: '1',
    });
    expect(unreachable.status, unreachable.stderr).toBe(2);
    expect(unreachable.stderr).toContain(`cannot read table ${tables.main}`);
    const misnamed = adminProcess(['ledger', 'check', '--resume', join(dir, 'b.json')], {
      TABLE_NAME: 'no-such-table',
    });
    expect(misnamed.status, misnamed.stderr).toBe(2);
    expect(misnamed.stderr).toMatch(/cannot read table no-such-table: ResourceNotFoundException/);
    expect(existsSync(join(dir, 'a.json')) || existsSync(join(dir, 'b.json'))).toBe(false);
  });
});
