import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runAdmin, commands } from '../../infra/ops/cli.js';
import { UsageError } from '../../infra/ops/command.js';
import { auditLog } from '../../lib/store/audit.js';
import { getReferencePrice } from '../../lib/store/prices.js';
import { hasRelationship } from '../../lib/store/relationships.js';
import { balances } from '../support/ledger.js';
import { newPlatform, type TestPlatform } from '../support/service.js';
import { ctx } from '../support/context.js';

const admin = (...argv: string[]) => runAdmin(argv, { ctx });
const REPO = resolve(import.meta.dirname, '..', '..');

/** A usage error names what is wrong and shows the command's usage line. */
async function refusedWithUsage(argv: string[], problem: RegExp) {
  const failure = await admin(...argv).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(failure, argv.join(' ')).toBeInstanceOf(UsageError);
  const message = (failure as Error).message;
  expect(message, argv.join(' ')).toMatch(problem);
  const name = commands[argv.slice(0, 2).join(' ')] ? argv.slice(0, 2).join(' ') : argv[0]!;
  expect(message, argv.join(' ')).toContain(`usage: npm run admin -- ${name}`);
}

describe('ops CLI parsing', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await newPlatform();
  });

  const depositArgs = (reference = `wire-${randomUUID()}`) => [
    'deposit',
    '--participant',
    platform.participantCode,
    '--asset',
    'USD',
    '--amount',
    '10',
    '--reference',
    reference,
    '--reason',
    'wire in',
  ];

  it('refuses a misspelled flag of every command, with its usage, before doing anything', async () => {
    await refusedWithUsage([...depositArgs(), '--account-lable', 'x'], /Unknown option '--account-lable'/);
    for (const [name, command] of Object.entries(commands)) {
      const argv = [...name.split(' '), '--definitely-not-a-flag', 'x'];
      await refusedWithUsage(argv, /Unknown option '--definitely-not-a-flag'/);
      // Every declared flag, misspelled by one transposition, is refused too.
      for (const flag of Object.keys(command.options)) {
        if (flag.length < 3) continue;
        const typo = `${flag.slice(0, -2)}${flag.at(-1)}${flag.at(-2)}`;
        if (typo === flag || command.options[typo]) continue;
        await refusedWithUsage([...name.split(' '), `--${typo}`, 'x'], new RegExp(`Unknown option '--${typo}'`));
      }
    }
    expect((await balances(platform))[`${platform.participantCode}/x/USD`]).toBeUndefined();
    expect((await balances(platform))[`${platform.participantCode}/general/USD`]).toBeUndefined();
  });

  it('refuses missing values, empty values, missing required flags and extra words', async () => {
    await refusedWithUsage(
      [
        'deposit',
        '--participant',
        platform.participantCode,
        '--asset',
        'USD',
        '--reason',
        'r',
        '--reference',
        'w1',
        '--amount',
      ],
      /argument missing/,
    );
    await refusedWithUsage([...depositArgs(), '--account-label', ''], /--account-label needs a non-empty value/);
    await refusedWithUsage([...depositArgs(), '--account-label', '   '], /--account-label needs a non-empty value/);
    await refusedWithUsage(
      ['deposit', '--participant', platform.participantCode, '--asset', 'USD', '--amount', '10', '--reason', 'r'],
      /--reference is required/,
    );
    await refusedWithUsage(
      ['deposit', '--participant', platform.participantCode, '--asset', 'USD', '--amount', '10', '--reference', 'w2'],
      /--reason is required/,
    );
    await refusedWithUsage([...depositArgs(), 'extra'], /unexpected argument 'extra'/);
    await refusedWithUsage(['deposit', 'now', ...depositArgs().slice(1)], /unexpected argument 'now'/);
    await refusedWithUsage(['trade', 'history'], /--trade-id is required/);
    await refusedWithUsage(
      [
        'price',
        'set',
        '--underlying',
        'BTC',
        '--quoted-currency',
        'USD',
        '--price',
        '1',
        '--reason',
        'r',
        '--force=yes',
      ],
      /--force/,
    );
    expect((await balances(platform))[`${platform.participantCode}/general/USD`]).toBeUndefined();
  });

  it('exits 2 with the usage on a misspelled flag (the real entry point)', () => {
    const run = spawnSync('node_modules/.bin/tsx', ['infra/local/admin.ts', 'deposit', '--account-lable', 'x'], {
      cwd: REPO,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status, run.stderr).toBe(2);
    expect(run.stderr).toContain("Unknown option '--account-lable'");
    expect(run.stderr).toContain('usage: npm run admin -- deposit --participant CODE');
  });
});

describe('ops CLI commands', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await newPlatform();
  });

  it('books a deposit reference once: the repeat prints the original booking and books nothing', async () => {
    const reference = `wire-${randomUUID()}`;
    const args = [
      'deposit',
      '--participant',
      platform.participantCode,
      '--asset',
      'USD',
      '--amount',
      '25.5',
      '--account-label',
      'wires',
      '--reference',
      reference,
      '--reason',
      'wire from the bank',
    ];
    const first: any = await admin(...args);
    expect(first).toEqual({
      movement_id: `deposit-${reference}`,
      reference,
      participant_code: platform.participantCode,
      account_group: platform.platformCode,
      account_label: 'wires',
      asset: 'USD',
      amount: '25.50',
      already_booked: false,
    });
    const repeated = await Promise.all([admin(...args), admin(...args)]);
    for (const again of repeated) expect(again).toEqual({ ...first, already_booked: true });
    expect((await balances(platform))[`${platform.participantCode}/wires/USD`]).toBe('25.50');
    // The same reference for another deposit is a mistake, not a repeat.
    await expect(admin(...args.map((arg) => (arg === '25.5' ? '30' : arg)))).rejects.toThrow(
      /reference: .* already booked as a different deposit/,
    );
    expect((await balances(platform))[`${platform.participantCode}/wires/USD`]).toBe('25.50');
  });

  it('records who did it, why, and what changed; with the deposit in its transaction', async () => {
    const since = Date.now() - 1;
    const reference = `wire-${randomUUID()}`;
    process.env.OPERATOR = 'alice@ops';
    try {
      await admin(
        'deposit',
        '--participant',
        platform.participantCode,
        '--asset',
        'USD',
        '--amount',
        '1',
        '--reference',
        reference,
        '--reason',
        'ticket 42',
      );
      await admin(
        'deposit',
        '--participant',
        platform.participantCode,
        '--asset',
        'USD',
        '--amount',
        '1',
        '--reference',
        reference,
        '--reason',
        'ticket 42 again',
      );
      await admin(
        'platform',
        'spread',
        '--platform',
        platform.platformCode,
        '--bps',
        '12',
        '--reason',
        'pricing review',
      );
    } finally {
      delete process.env.OPERATOR;
    }
    const entries = (await auditLog(ctx, since)).filter(
      (entry) =>
        entry.operator === 'alice@ops' &&
        (entry.changes.reference === reference || entry.changes.platform_code === platform.platformCode),
    );
    expect(entries).toEqual([
      expect.objectContaining({
        command: 'deposit',
        operator: 'alice@ops',
        reason: 'ticket 42',
        changes: expect.objectContaining({ reference, participant_code: platform.participantCode, amount: '1' }),
      }),
      expect.objectContaining({
        command: 'platform spread',
        reason: 'pricing review',
        changes: { platform_code: platform.platformCode, spread_bps: '12' },
      }),
    ]);
  });

  it('takes the OS user as operator when OPERATOR is not set', async () => {
    const since = Date.now() - 1;
    await admin('platform', 'spread', '--platform', platform.platformCode, '--bps', '13', '--reason', 'who am i');
    const [entry] = (await auditLog(ctx, since)).filter(
      (e) => e.reason === 'who am i' && e.changes.platform_code === platform.platformCode,
    );
    expect(entry?.operator).toBe((await import('node:os')).userInfo().username);
  });

  it('grants a relationship only between a platform and a participant that both exist', async () => {
    const other = await newPlatform();
    await expect(
      admin('relationship', 'grant', '--platform', 'NOPE99', '--participant', other.participantCode, '--reason', 'r'),
    ).rejects.toThrow('platform NOPE99 not found');
    await expect(
      admin('relationship', 'grant', '--platform', platform.platformCode, '--participant', 'NOPE99', '--reason', 'r'),
    ).rejects.toThrow('participant NOPE99 not found');
    expect(await hasRelationship(ctx, platform.platformCode, 'submits_platform_transfers_for', 'NOPE99')).toBe(false);
    await expect(
      admin(
        'relationship',
        'grant',
        '--platform',
        platform.platformCode,
        '--participant',
        other.participantCode,
        '--kind',
        'owns',
        '--reason',
        'r',
      ),
    ).rejects.toThrow(/unknown relationship kind/);
    await admin(
      'relationship',
      'grant',
      '--platform',
      platform.platformCode,
      '--participant',
      other.participantCode,
      '--reason',
      'partnership',
    );
    expect(
      await hasRelationship(ctx, platform.platformCode, 'submits_platform_transfers_for', other.participantCode),
    ).toBe(true);
  });

  // SOL/BTC: a pair no other test file prices (another file asserts DOGE/EUR has no price).
  it('price set refuses zero, negative and over-precise prices, and asks for --force on a move over 50%', async () => {
    const price = (value: string, ...more: string[]) =>
      admin(
        'price',
        'set',
        '--underlying',
        'SOL',
        '--quoted-currency',
        'BTC',
        '--price',
        value,
        '--reason',
        'feed down',
        ...more,
      );
    await price('0.1', '--force');
    for (const bad of ['0', '0.000', '-1', '--1', '0.1234567890123']) {
      await expect(
        price(`${bad}`).catch((error: Error) => Promise.reject(error)),
        bad,
      ).rejects.toThrow(/price/);
    }
    await expect(price('0.16')).rejects.toThrow(/moves SOL\/BTC 60% .*--force/);
    await expect(price('0.04')).rejects.toThrow(/moves SOL\/BTC 60% .*--force/);
    expect((await getReferencePrice(ctx, 'SOL', 'BTC'))?.price.toFixed()).toBe('0.1');
    await price('0.15');
    expect((await getReferencePrice(ctx, 'SOL', 'BTC'))?.price.toFixed()).toBe('0.15');
    await price('0.5', '--force');
    expect((await getReferencePrice(ctx, 'SOL', 'BTC'))?.price.toFixed()).toBe('0.5');
  });
});
