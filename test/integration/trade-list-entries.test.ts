import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../lib/context.js';
import { acceptedTrade, type Trade } from '../../lib/domain/trade.js';
import { validateTradeReport } from '../../lib/domain/trade-report.js';
import { newId } from '../../lib/store/codes.js';
import { tradeVisibilityEntity } from '../../lib/store/entities/trade.js';
import { findMigration, runMigration, TRADE_LIST_ENTRIES } from '../../lib/store/migrations/index.js';
import { transactWrite } from '../../lib/store/table/transactions.js';
import { tradeItems, updateTrade } from '../../lib/store/trades.js';
import { testContext, testEndpoint } from '../support/context.js';
import { createStreamFreeTables, ownTableNames } from '../support/tables.js';
import type { TestPlatform } from '../support/service.js';
import { tradeAsListed, tradeBody } from '../support/trades.js';

/**
 * Migration 0003 (lib/store/migrations/trade-list-entries.ts): a party's platform's list entries written before
 * entries held the trade get it, exactly as stored, once, and never behind a change of the trade made while it
 * runs. On tables of this file's own: a migration run scans the whole table, whatever its scope.
 */

const tables = ownTableNames('trade-list-entries');
const own = testContext({ tables });
const migration = findMigration(TRADE_LIST_ENTRIES)!;

beforeAll(async () => {
  await createStreamFreeTables(testEndpoint(), tables);
});

const PARTY_PLATFORM = 'PARTY1';
const REPORTER = 'REPRT1';

/** A trade reported by REPORTER with a customer listed on PARTY_PLATFORM, its entry there as an older release wrote it. */
async function tradeWithOldEntry(): Promise<Trade> {
  const nowMs = own.clock.nowMs();
  const body = tradeBody({ platformCode: REPORTER } as TestPlatform, {
    buyer: `B${newId().slice(0, 5).toUpperCase()}`,
    seller: `S${newId().slice(0, 5).toUpperCase()}`,
  });
  const report = validateTradeReport(body, { platformCode: REPORTER, nowMs });
  if (!report.ok) throw new Error(report.errors.join('; '));
  const trade = acceptedTrade(report.value, { tradeId: newId(), nowMs, accountGroups: [PARTY_PLATFORM, REPORTER] });
  await transactWrite(own, tradeItems(own, trade));
  // What entries held before they held the trade: the filtered fields and the states, no `reported_by`.
  await own.db.send(
    new UpdateCommand({
      TableName: own.tables.main,
      Key: tradeVisibilityEntity.key({ trade_id: trade.trade_id, platform_code: PARTY_PLATFORM }),
      UpdateExpression:
        'REMOVE reported_by, symbol, parties, last_update, status_sequence, visible_to, trade_price, accepted_timestamp',
    }),
  );
  return trade;
}

/** The trade as stored and as its entry on PARTY_PLATFORM holds it. */
const asListed = (tradeId: string) => tradeAsListed(own, tradeId, PARTY_PLATFORM);

const ACTIVATE = { trade_state: 'active', settlement_state: 'obligations_outstanding' } as const;

describe('migration 0003-trade-list-entries', () => {
  it("gives a party's platform's old entries the trade as stored, once", async () => {
    const trades = [await tradeWithOldEntry(), await tradeWithOldEntry()];
    // A change before the migration sets the fields it changes on the entry, which still holds no trade.
    expect(await updateTrade(own, trades[1]!, ['accepted'], ACTIVATE, own.clock.nowMs())).toBe(true);
    for (const trade of trades) expect((await asListed(trade.trade_id)).listed).toBeUndefined();

    const first = await runMigration(own, migration, {
      platformCode: PARTY_PLATFORM,
      operator: 'test',
      reason: 'test',
    });
    expect(first.outcome).toBe('applied');
    expect(first.progress).toMatchObject({ migrated: 2, written: 2, already: 0, skipped: 0 });
    for (const trade of trades) {
      const { stored, listed } = await asListed(trade.trade_id);
      expect(listed).toEqual(stored);
    }
    const again = await runMigration(own, migration, {
      platformCode: PARTY_PLATFORM,
      operator: 'test',
      reason: 'test',
    });
    expect(again.outcome).toBe('already applied');
  });

  it('reads the trade again when it changed between the read and the write, and leaves the entry as the trade is', async () => {
    const trade = await tradeWithOldEntry();
    const { transactions, progress } = await migrateChangingFirst(trade, own.clock.nowMs() + 1);
    expect(transactions).toBe(2);
    expect(progress.migrated).toBe(1);
    const { stored, listed } = await asListed(trade.trade_id);
    expect(stored.trade_state).toBe('active');
    expect(listed).toEqual(stored);
  });

  it("writes the entry again when the trade changed in the read's own millisecond, which its check can't tell", async () => {
    const trade = await tradeWithOldEntry();
    // The change is stamped with the read trade's `last_update`, so the check on it still holds at the write.
    const { transactions, progress } = await migrateChangingFirst(trade, trade.last_update);
    expect(transactions).toBe(2);
    expect(progress).toMatchObject({ migrated: 1, skipped: 0 });
    const { stored, listed } = await asListed(trade.trade_id);
    expect(stored).toMatchObject({ trade_state: 'active', last_update: trade.last_update });
    expect(listed).toEqual(stored);
  });
});

/**
 * The migration run over the table, the trade activated (stamped `changeAtMs`) right before the migration's first
 * transaction, after it read the trade; how many transactions it sent, and its progress.
 */
async function migrateChangingFirst(trade: Trade, changeAtMs: number) {
  let transactions = 0;
  const db = {
    send: async (command: unknown) => {
      if (command instanceof TransactWriteCommand && transactions++ === 0) {
        expect(await updateTrade(own, trade, ['accepted'], ACTIVATE, changeAtMs)).toBe(true);
      }
      return own.db.send(command as never);
    },
  };
  const migrating = { ...own, db: db as never } as AppContext;
  let position: Record<string, unknown> | undefined;
  const progress = { pages: 0, read: 0, migrated: 0, written: 0, already: 0, skipped: 0 };
  do position = await migration.page(migrating, {}, position, progress);
  while (position !== undefined);
  return { transactions, progress };
}
