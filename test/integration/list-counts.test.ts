import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TradeState } from '../../lib/domain/settlement.js';
import { validateTradeReport } from '../../lib/domain/trade-report.js';
import { applyBankEvent } from '../../lib/payments/apply-bank-event.js';
import { newId } from '../../lib/store/codes.js';
import { tradeItems, updateTrade } from '../../lib/store/trades.js';
import { acceptedTrade } from '../../lib/domain/trade.js';
import { transactWrite } from '../../lib/store/table/transactions.js';
import { customersViaStore } from '../support/customers.js';
import { newPlatform, type TestPlatform } from '../support/service.js';
import { tradeBody } from '../support/trades.js';
import { ctx } from '../support/context.js';
import { storeSubmittedPayment } from '../support/payments.js';
import { byProfile } from '../support/profile.js';

/**
 * `count` of GET /trades and GET /payments/status comes from sharded counters written in the records'
 * own transactions (lib/store/table/counters.ts). Property: after any mix of concurrent bookings and state changes,
 * every counted list's count equals the records a full walk of the list finds.
 */

const TRADE_STATES: TradeState[] = ['accepted', 'active', 'terminated'];
const PAYMENT_PATHS = [
  [],
  ['pending'],
  ['pending', 'posted'],
  ['failed'],
  ['pending', 'failed'],
  ['pending', 'posted', 'reversed'],
] as const;

const tradeOp = fc.record({
  kind: fc.constant('trade' as const),
  /** Which of the three platforms' customer is the buyer (0 = the reporter's own). */
  buyerPlatform: fc.integer({ min: 0, max: 2 }),
  /** How far the trade moves after its report: 0 stays accepted, 1 active, 2 terminated, 3 terminated directly. */
  moves: fc.integer({ min: 0, max: 3 }),
});
const paymentOp = fc.record({
  kind: fc.constant('payment' as const),
  path: fc.integer({ min: 0, max: PAYMENT_PATHS.length - 1 }),
});
/** A deposit to one of the three platforms' customers: a movement on that platform's list and counter. */
const depositOp = fc.record({ kind: fc.constant('deposit' as const), platform: fc.integer({ min: 0, max: 2 }) });

async function allOf(platform: TestPlatform, path: string): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | null = null;
  do {
    const response: { status: number; text: string; body: any } = await platform.get(
      cursor === null ? path : `${path}${path.includes('?') ? '&' : '?'}cursor=${encodeURIComponent(cursor)}`,
    );
    expect(response.status, response.text).toBe(200);
    items.push(...response.body.message);
    cursor = response.body.next_cursor;
  } while (cursor !== null);
  return items;
}

async function countOf(platform: TestPlatform, path: string): Promise<number> {
  const response = await platform.get(path);
  expect(response.status, response.text).toBe(200);
  return response.body.count;
}

async function reportTrade(
  reporter: TestPlatform,
  seller: string,
  buyer: string,
  buyerGroup: string,
): Promise<Awaited<ReturnType<typeof acceptedTrade>>> {
  const now = ctx.clock.nowMs();
  const report = validateTradeReport(tradeBody(reporter, { buyer, seller }), {
    platformCode: reporter.platformCode,
    nowMs: now,
  });
  if (!report.ok) throw new Error(report.errors.join('; '));
  const trade = acceptedTrade(report.value, {
    tradeId: newId(),
    nowMs: now,
    accountGroups: [buyerGroup, reporter.platformCode],
  });
  await transactWrite(ctx, tradeItems(ctx, trade));
  return trade;
}

describe('list counts under concurrent bookings and state changes', () => {
  it('property: every counted count equals what walking the list finds', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(tradeOp, paymentOp, depositOp), { minLength: 1, maxLength: 14 }),
        async (ops) => {
          const platforms = await Promise.all([newPlatform(), newPlatform(), newPlatform()]);
          const customers = await Promise.all(
            platforms.map(async (p) => (await customersViaStore(p.platformCode, 1))[0]!),
          );
          const [reporter] = platforms as [TestPlatform, TestPlatform, TestPlatform];

          const { deposit } = await import('../../lib/ledger/deposit.js');
          await Promise.all(
            ops.map(async (op) => {
              if (op.kind === 'deposit') {
                await deposit(ctx, {
                  reference: randomUUID(),
                  participantCode: customers[op.platform]!,
                  asset: 'USD',
                  amount: '1',
                });
                return;
              }
              if (op.kind === 'trade') {
                let trade = await reportTrade(
                  reporter,
                  customers[0]!,
                  customers[op.buyerPlatform]!,
                  platforms[op.buyerPlatform]!.platformCode,
                );
                if (op.moves === 3) {
                  expect(
                    await updateTrade(
                      ctx,
                      trade,
                      ['accepted', 'active'],
                      { trade_state: 'terminated', settlement_state: 'defaulted' },
                      ctx.clock.nowMs(),
                    ),
                  ).toBe(true);
                  return;
                }
                if (op.moves >= 1) {
                  expect(
                    await updateTrade(
                      ctx,
                      trade,
                      ['accepted'],
                      { trade_state: 'active', settlement_state: 'obligations_outstanding' },
                      ctx.clock.nowMs(),
                    ),
                  ).toBe(true);
                  trade = { ...trade, trade_state: 'active' };
                }
                if (op.moves >= 2) {
                  expect(
                    await updateTrade(
                      ctx,
                      trade,
                      ['active'],
                      { trade_state: 'terminated', settlement_state: 'settled' },
                      ctx.clock.nowMs(),
                    ),
                  ).toBe(true);
                }
                return;
              }
              const transactionId = await storeSubmittedPayment(ctx, reporter, {
                amount: '10.00',
                reference: 'counts',
              });
              for (const status of PAYMENT_PATHS[op.path]!)
                expect((await applyBankEvent(ctx, { transaction_id: transactionId, status })).outcome).toBe('applied');
            }),
          );

          for (const platform of platforms) {
            const trades = await allOf(platform, '/trades?page_size=7');
            expect(await countOf(platform, '/trades')).toBe(trades.length);
            for (const state of TRADE_STATES) {
              expect(await countOf(platform, `/trades?trade_state=${state}`)).toBe(
                trades.filter((t) => t.trade_state === state).length,
              );
            }
            const movements = await allOf(platform, '/movements?page_size=3');
            expect(new Set(movements.map((m) => m.movement_id)).size).toBe(movements.length);
            expect(await countOf(platform, '/movements')).toBe(movements.length);
            // Each account's own list (its index entries) and its stored count agree with the platform's list.
            for (const account of await allOf(platform, '/accounts?page_size=10')) {
              const own = await allOf(platform, `/accounts/${account.account_id}/movements?page_size=2`);
              expect(own.map((m) => m.movement_id).sort()).toEqual(
                movements
                  .filter((m) => m.changes.some((c: any) => c.account_id === account.account_id))
                  .map((m) => m.movement_id)
                  .sort(),
              );
              expect(await countOf(platform, `/accounts/${account.account_id}/movements`)).toBe(own.length);
            }
          }
          // Deposits are movements of their platform; so are the payments' bank events that move money.
          for (const [index, platform] of platforms.entries()) {
            const deposits = (await allOf(platform, '/movements?movement_type=deposit')).length;
            expect(deposits).toBe(ops.filter((op) => op.kind === 'deposit' && op.platform === index).length);
          }
          const expectedTrades = ops.filter((op) => op.kind === 'trade').length;
          expect(await countOf(reporter, '/trades')).toBe(expectedTrades);
          const payments = await allOf(reporter, '/payments/status?size=5');
          expect(payments).toHaveLength(ops.filter((op) => op.kind === 'payment').length);
          expect(await countOf(reporter, '/payments/status')).toBe(payments.length);
          for (const status of ['submitted', 'pending', 'posted', 'failed', 'reversed']) {
            expect(await countOf(reporter, `/payments/status?status=${status}`)).toBe(
              payments.filter((p) => p.status === status).length,
            );
          }
        },
      ),
      { numRuns: byProfile(3, 6) },
    );
  });
});

describe('accounts count', () => {
  it('counts each account once, when its first credit opens it, however many concurrent bookings race to open it', async () => {
    const platform = await newPlatform();
    const [customer] = await customersViaStore(platform.platformCode, 1);
    const { deposit } = await import('../../lib/ledger/deposit.js');
    // Eight deposits race to open the same two accounts; four more open one each.
    await Promise.all([
      ...Array.from({ length: 8 }, (_, i) =>
        deposit(ctx, {
          reference: randomUUID(),
          participantCode: customer!,
          asset: i % 2 ? 'USD' : 'BTC',
          amount: '1',
        }),
      ),
      ...['a', 'b', 'c', 'd'].map((label) =>
        deposit(ctx, {
          reference: randomUUID(),
          participantCode: platform.participantCode,
          asset: 'USD',
          amount: '2',
          accountLabel: label,
        }),
      ),
    ]);
    const listed = await allOf(platform, '/accounts?page_size=3');
    expect(listed).toHaveLength(6);
    expect(await countOf(platform, '/accounts')).toBe(6);
    const usd = listed.find((a) => a.account_owner === customer && a.asset === 'USD');
    expect(usd.balance).toBe('4.00');
  });
});
