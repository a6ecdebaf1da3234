import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_PARTICIPANTS, systemAccount } from '../../lib/domain/ledger.js';
import { Money } from '../../lib/domain/money.js';
import { deposit } from '../../lib/ledger/deposit.js';
import { accountShardEntity } from '../../lib/store/entities/ledger.js';
import { balanceOf, OUTSIDE_ACCOUNT_SHARDS, scanLedger } from '../../lib/store/ledger.js';
import { readMoney } from '../../lib/store/table/numbers.js';
import { createPlatform } from '../../lib/store/platforms.js';
import { testContext, testEndpoint } from '../support/context.js';
import { createStreamFreeTables, ownTableNames } from '../support/tables.js';

/**
 * Tables of this file's own: the test scans the whole ledger, and the shared test table holds every earlier
 * file's items by the time it runs (its scan took over 30 s late in the suite and starved the file beside it).
 */
const tables = ownTableNames('hot-items');
const ctx = testContext({ tables });

beforeAll(async () => {
  await createStreamFreeTables(testEndpoint(), tables);
});

/**
 * The outside world's balances ("hot items", lib/store/README.md): every platform's deposits debit the external
 * boundary, so its balance is spread over shard items, one drawn per booking, and read as their sum.
 */
describe('sharded outside-world balances', () => {
  it("concurrent deposits of many platforms spread over the boundary's shards; its balance is their exact sum", async () => {
    const platforms = await Promise.all(Array.from({ length: 6 }, () => createPlatform(ctx, 'hot')));
    const boundary = systemAccount(SYSTEM_PARTICIPANTS.externalBoundary, 'deposits', 'SOL');
    const before = await balanceOf(ctx, boundary);
    const amounts = Array.from({ length: 48 }, (_, i) => `0.00000000${(i % 9) + 1}`);
    await Promise.all(
      amounts.map((amount, i) =>
        deposit(ctx, {
          reference: randomUUID(),
          participantCode: platforms[i % platforms.length]!.participant_code,
          asset: 'SOL',
          amount,
        }),
      ),
    );
    const total = amounts.reduce((sum, amount) => sum.plus(amount), new Money(0));
    expect((await balanceOf(ctx, boundary)).toFixed()).toBe(before.minus(total).toFixed());

    const shards = await Promise.all(
      Array.from({ length: OUTSIDE_ACCOUNT_SHARDS }, async (_, shard) => {
        const out = await ctx.db.send(
          new GetCommand({
            TableName: ctx.tables.main,
            Key: accountShardEntity.key({ ...boundary, shard }),
            ConsistentRead: true,
          }),
        );
        return out.Item ? readMoney(out.Item.balance) : undefined;
      }),
    );
    // 48 bookings over 16 shards: all on one shard has probability 16^-47.
    expect(shards.filter((shard) => shard !== undefined).length).toBeGreaterThan(1);
    const { accounts } = await scanLedger(ctx);
    const summed = accounts
      .filter(
        (a) => a.participant_code === boundary.participant_code && a.account_group === 'deposits' && a.asset === 'SOL',
      )
      .reduce((sum, a) => sum.plus(a.balance), new Money(0));
    expect(summed.toFixed()).toBe((await balanceOf(ctx, boundary)).toFixed());
  });
});
