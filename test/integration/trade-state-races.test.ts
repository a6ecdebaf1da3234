import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { validateTradeReport } from '../../lib/domain/trade-report.js';
import { acceptedTrade, type Trade } from '../../lib/domain/trade.js';
import { Money } from '../../lib/domain/money.js';
import { activateTrade } from '../../lib/settlement/activate-trade.js';
import { attemptSettlement, defaultTrade } from '../../lib/settlement/settle-trade.js';
import { newId } from '../../lib/store/codes.js';
import { movementEntity } from '../../lib/store/entities/ledger.js';
import { tradeEntity } from '../../lib/store/entities/trade.js';
import { balanceOf } from '../../lib/store/ledger.js';
import { getTrade, TradeStateChangedError, tradeItems, tradeUpdateItems, updateTrade } from '../../lib/store/trades.js';
import { transactWrite } from '../../lib/store/table/transactions.js';
import { fund } from '../support/ledger.js';
import { newPlatform, type TestPlatform } from '../support/service.js';
import { newCustomer } from '../support/trade-parties.js';
import { tradeBody } from '../support/trades.js';
import { ctx } from '../support/context.js';

/**
 * The trade's state transitions raced, as duplicate workers run them (a task retried while its first run is
 * still going, a second execution of the same trade, a stale write from a worker that read the trade before
 * it settled). Each transition is a write conditioned on the state (and status sequence) it read. Planted
 * without the state condition (lib/store/trades.ts `changeExpression`, its name and value dropped with it),
 * every test here fails on the engine's own assertion (an update not conditioned on the state it read); with
 * that assertion removed too, the stale write below goes through (a session's record, which changes no
 * status, is guarded by the state alone), while the racing settlements still hold on the status sequence's
 * condition. No workflow runs here: the tasks are called by hand.
 */

interface Market {
  platform: TestPlatform;
  buyer: string;
  seller: string;
}

async function market(): Promise<Market> {
  const platform = await newPlatform();
  const [buyer, seller] = await Promise.all([newCustomer(platform.platformCode), newCustomer(platform.platformCode)]);
  return { platform, buyer, seller };
}

/** A reported 1 BTC at 1000 USD trade, stored as POST /trades stores it, no execution started. */
async function storedTrade({ platform, buyer, seller }: Market): Promise<Trade> {
  const nowMs = ctx.clock.nowMs();
  const body = tradeBody(platform, { buyer, seller, price: '1000', quantity: '1' });
  const report = validateTradeReport(body, { platformCode: platform.platformCode, nowMs });
  if (!report.ok) throw new Error(report.errors.join('; '));
  const trade = acceptedTrade(report.value, {
    tradeId: newId(),
    nowMs,
    accountGroups: [platform.platformCode, platform.platformCode],
  });
  await transactWrite(ctx, tradeItems(ctx, trade));
  return trade;
}

function general({ platform }: Market, participant_code: string, asset: string) {
  return { participant_code, account_group: platform.platformCode, account_label: 'general', asset };
}

async function tradeItem(tradeId: string): Promise<Record<string, any>> {
  const out = await ctx.db.send(
    new GetCommand({ TableName: ctx.tables.main, Key: tradeEntity.key({ trade_id: tradeId }), ConsistentRead: true }),
  );
  return out.Item!;
}

async function settlementMovement(tradeId: string): Promise<Record<string, any> | undefined> {
  const out = await ctx.db.send(
    new GetCommand({
      TableName: ctx.tables.main,
      Key: movementEntity.key({ movement_id: `settlement-${tradeId}` }),
      ConsistentRead: true,
    }),
  );
  return out.Item;
}

describe('trade state transitions under racing workers', () => {
  it('settlement steps of one trade run at once (attempts and defaults): it settles once, every racer agrees', async () => {
    const parties = await market();
    await Promise.all([fund(parties.buyer, 'USD', '1000'), fund(parties.seller, 'BTC', '1')]);
    const trade = await storedTrade(parties);
    await Promise.all([activateTrade(ctx, trade.trade_id), activateTrade(ctx, trade.trade_id)]);

    const racers = await Promise.allSettled([
      ...Array.from({ length: 4 }, () => attemptSettlement(ctx, trade.trade_id)),
      ...Array.from({ length: 2 }, () => defaultTrade(ctx, trade.trade_id)),
    ]);
    // A racer's answer is the outcome or "already terminated", never an error: a task that loses reads the
    // trade again and reports what it finds.
    expect(racers.map((racer) => racer.status)).toEqual(Array(6).fill('fulfilled'));
    const outcomes = racers.map((racer) => (racer as PromiseFulfilledResult<{ outcome: string }>).value.outcome);
    expect(outcomes.filter((outcome) => outcome === 'settled')).toHaveLength(1);
    expect(outcomes.every((outcome) => outcome === 'settled' || outcome === 'terminated')).toBe(true);

    const after = await getTrade(ctx, trade.trade_id, { consistent: true });
    expect(after).toMatchObject({ trade_state: 'terminated', settlement_state: 'settled' });
    expect(await settlementMovement(trade.trade_id)).toBeDefined();
    // Moved once: the buyer holds the bitcoin and none of the dollars, the seller the reverse.
    expect((await balanceOf(ctx, general(parties, parties.buyer, 'BTC'))).toFixed()).toBe('1');
    expect((await balanceOf(ctx, general(parties, parties.buyer, 'USD'))).toFixed()).toBe('0');
    expect((await balanceOf(ctx, general(parties, parties.seller, 'USD'))).toFixed()).toBe('1000');
    expect((await balanceOf(ctx, general(parties, parties.seller, 'BTC'))).toFixed()).toBe('0');
  });

  it('a stale settlement write after the trade settled is refused and changes nothing', async () => {
    const parties = await market();
    const trade = await storedTrade(parties);
    await activateTrade(ctx, trade.trade_id);
    // Unfunded: the session records the parties' outstanding obligations; a worker reads the trade now.
    expect((await attemptSettlement(ctx, trade.trade_id)).outcome).toBe('outstanding');
    const stale = (await getTrade(ctx, trade.trade_id, { consistent: true }))!;
    expect(stale).toMatchObject({ trade_state: 'active', settlement_state: 'obligations_outstanding' });

    await Promise.all([fund(parties.buyer, 'USD', '1000'), fund(parties.seller, 'BTC', '1')]);
    expect((await attemptSettlement(ctx, trade.trade_id)).outcome).toBe('settled');
    const settled = await tradeItem(trade.trade_id);

    const at = ctx.clock.nowMs();
    // The slow worker's writes, from what it read: a session's record (no status change, so only the state it
    // read guards it) and a default (a status change: the state and the status sequence guard it).
    const record = { parties: stale.parties.map((party) => ({ ...party, settlement_state: 'defaulted' as const })) };
    await expect(transactWrite(ctx, tradeUpdateItems(ctx, stale, ['accepted', 'active'], record, at))).rejects.toThrow(
      TradeStateChangedError,
    );
    await expect(
      transactWrite(
        ctx,
        tradeUpdateItems(
          ctx,
          stale,
          ['accepted', 'active'],
          { trade_state: 'terminated', settlement_state: 'defaulted', defaulted_timestamp: at },
          at,
        ),
      ),
    ).rejects.toThrow(TradeStateChangedError);
    // updateTrade rereads on a lost condition and gives up once the trade has left the expected states.
    expect(await updateTrade(ctx, stale, ['accepted', 'active'], record, at)).toBe(false);

    const after = await tradeItem(trade.trade_id);
    expect(after).toEqual(settled);
    expect(after).toMatchObject({ trade_state: 'terminated', settlement_state: 'settled' });
    // Out of the open-trades index for good: no sweep picks it up again.
    expect(after.gsi2pk).toBeUndefined();
    const movement = await settlementMovement(trade.trade_id);
    const legs = (movement!.legs as { participant_code: string; asset: string; amount: unknown }[]).map(
      (leg) => `${leg.participant_code} ${leg.asset} ${new Money(String(leg.amount)).toFixed()}`,
    );
    expect(legs.sort()).toEqual(
      [
        `${parties.buyer} USD -1000`,
        `${parties.buyer} BTC 1`,
        `${parties.seller} BTC -1`,
        `${parties.seller} USD 1000`,
      ].sort(),
    );
  });

  it('activations racing a settlement: the trade ends settled, never back to active', async () => {
    const parties = await market();
    await Promise.all([fund(parties.buyer, 'USD', '1000'), fund(parties.seller, 'BTC', '1')]);
    const trade = await storedTrade(parties);
    const racers = await Promise.allSettled([
      activateTrade(ctx, trade.trade_id),
      attemptSettlement(ctx, trade.trade_id),
      activateTrade(ctx, trade.trade_id),
      attemptSettlement(ctx, trade.trade_id),
    ]);
    expect(racers.map((racer) => racer.status)).toEqual(Array(4).fill('fulfilled'));
    // Whatever order they ran in, the last word is the settlement's.
    await activateTrade(ctx, trade.trade_id);
    expect(await getTrade(ctx, trade.trade_id, { consistent: true })).toMatchObject({
      trade_state: 'terminated',
      settlement_state: 'settled',
    });
  });
});
