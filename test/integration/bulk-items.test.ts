import { randomUUID } from 'node:crypto';
import { GetCommand, NumberValue } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { SYSTEM_PARTICIPANTS, systemAccount } from '../../lib/domain/ledger.js';
import { Money } from '../../lib/domain/money.js';
import { accountEntity } from '../../lib/store/entities/ledger.js';
import { openedAccountItem } from '../../lib/store/ledger.js';
import { bookMovement } from '../../lib/ledger/engine.js';
import { createPlatform } from '../../lib/store/platforms.js';
import { ctx } from '../support/context.js';

/**
 * `npm run bench` writes 100,000 records per list in bulk with the store's item builders instead of booking
 * them one transaction at a time. For records that is the booking's own Put; an account, which bookings
 * write with an update, is written whole by `openedAccountItem`: it must be exactly what bookings leave.
 */
describe('bulk-written items are what the booking paths store', () => {
  it('openedAccountItem holds the same attributes as an account opened and then credited by movements', async () => {
    const platform = await createPlatform(ctx, 'bulk items');
    const account = {
      participant_code: platform.participant_code,
      account_group: platform.platform_code,
      account_label: 'bulk',
      asset: 'USD',
    };
    const boundary = systemAccount(SYSTEM_PARTICIPANTS.externalBoundary, 'deposits', 'USD');
    const deposit = (amount: string) =>
      bookMovement(ctx, {
        movement_id: randomUUID(),
        type: 'deposit',
        reference: 'bulk items',
        legs: [
          { account, platform_code: platform.platform_code, amount: new Money(amount) },
          { account: boundary, platform_code: null, amount: new Money(amount).neg() },
        ],
      });
    await deposit('1.25');
    await deposit('2.5');
    const stored = (
      await ctx.db.send(
        new GetCommand({ TableName: ctx.tables.main, Key: accountEntity.key(account), ConsistentRead: true }),
      )
    ).Item!;

    const built = openedAccountItem(
      ctx,
      account,
      platform.platform_code,
      new Money('3.75'),
      Number(stored.last_update),
      2,
    );
    const put = built.item.Put!;
    expect(put.TableName).toBe(ctx.tables.main);
    expect(put.ConditionExpression).toBeUndefined();
    // Same attributes, same values; numbers compared as their exact decimal text, however they were read.
    const normalise = (item: Record<string, unknown>) =>
      Object.fromEntries(
        Object.entries(item).map(([name, value]) => [
          name,
          value instanceof NumberValue || typeof value === 'number'
            ? `N ${String(value instanceof NumberValue ? value.value : value)}`
            : value,
        ]),
      );
    expect(normalise(put.Item as Record<string, unknown>)).toEqual(normalise(stored));
    expect(built.counts).toEqual([{ platformCode: platform.platform_code, list: 'accounts', bucket: 'all', delta: 1 }]);
  });

  it('refuses an outside-world account: it is sharded and written only by bookings', () => {
    const boundary = systemAccount(SYSTEM_PARTICIPANTS.externalBoundary, 'deposits', 'USD');
    expect(() => openedAccountItem(ctx, boundary, 'ANY', new Money(1), 0, 1)).toThrow(/sharded/);
  });
});
