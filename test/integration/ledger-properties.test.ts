import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { ensureTables } from '../../infra/local/dynamodb.js';
import { useLocalTables } from '../../infra/local/local-env.js';
import { InsufficientFundsError } from '../../lib/domain/errors.js';
import { isSystemParticipant, accountKey } from '../../lib/domain/ledger.js';
import { Money } from '../../lib/domain/money.js';
import { deposit } from '../../lib/ledger/deposit.js';
import { readMoney } from '../../lib/store/numbers.js';
import { scanLedger } from '../../lib/store/ledger.js';
import { createPlatform } from '../../lib/store/platforms.js';
import { grantRelationship } from '../../lib/store/relationships.js';
import { createTransfer } from '../../lib/transfers/create-transfer.js';
import { TEST_SECRETS_KEY } from '../support/tables.js';

/**
 * Random concurrent deposits and transfers against DynamoDB Local, then the ledger's invariants over the
 * whole table. The file uses tables of its own so that other test files' writes can't interleave with the
 * scans that check conservation.
 */
const ASSETS = { USD: 2, BTC: 8, ETH: 18 } as const;
type AssetSymbol = keyof typeof ASSETS;

const amountArb = (asset: AssetSymbol) =>
  fc.tuple(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 10 ** Math.min(ASSETS[asset], 9) - 1 })).map(([whole, fraction]) => {
    const text = `${whole}.${String(fraction).padStart(Math.min(ASSETS[asset], 9), '0')}`;
    return new Money(text).isZero() ? '1' : text;
  });

type Operation =
  | { kind: 'deposit'; who: number; asset: AssetSymbol; amount: string }
  | { kind: 'transfer'; from: number; fromLabel: string; to: number; toLabel: string; asset: AssetSymbol; amount: string };

const assetArb = fc.constantFrom<AssetSymbol>('USD', 'BTC', 'ETH');
const labelArb = fc.constantFrom('general', 'savings');
const operationArb: fc.Arbitrary<Operation> = fc.oneof(
  assetArb.chain((asset) => fc.record({ kind: fc.constant('deposit' as const), who: fc.nat(2), asset: fc.constant(asset), amount: amountArb(asset) })),
  assetArb.chain((asset) =>
    fc.record({
      kind: fc.constant('transfer' as const),
      from: fc.nat(2),
      fromLabel: labelArb,
      to: fc.nat(2),
      toLabel: labelArb,
      asset: fc.constant(asset),
      amount: amountArb(asset),
    }),
  ),
);

describe('ledger invariants under concurrent deposits and transfers', () => {
  let participants: string[] = [];
  let operator = '';

  beforeAll(async () => {
    const tables = { main: `prop-main-${process.pid}`, ttl: `prop-ttl-${process.pid}` };
    const endpoint = inject('dynamoEndpoint');
    await ensureTables(endpoint, tables);
    useLocalTables(endpoint, tables, TEST_SECRETS_KEY);
    const platforms = await Promise.all([createPlatform('p0'), createPlatform('p1'), createPlatform('p2')]);
    participants = platforms.map((platform) => platform.participant_code);
    operator = participants[0]!;
    // The operator platform may move anyone's money, so transfers cross participants and platforms.
    await Promise.all(participants.slice(1).map((code) => grantRelationship(operator, 'submits_platform_transfers_for', code)));
  });

  it('conserves every asset, never overdraws, and the movements replay to the balances', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operationArb, { minLength: 1, maxLength: 25 }), async (operations) => {
        const movementsBefore = (await scanLedger()).movements.length;
        const outcomes = await Promise.allSettled(
          operations.map((op) =>
            op.kind === 'deposit'
              ? deposit({ participantCode: participants[op.who]!, asset: op.asset, amount: op.amount })
              : createTransfer(operator, {
                  from_participant_code: participants[op.from]!,
                  from_account_label: op.fromLabel,
                  to_participant_code: participants[op.to]!,
                  to_account_label: op.toLabel,
                  asset: op.asset,
                  amount: op.amount,
                }),
          ),
        );
        for (const outcome of outcomes) {
          if (outcome.status === 'rejected') {
            const error = outcome.reason as Error;
            // Only expected refusals: overdraft, or the same account on both sides.
            const expected = error instanceof InsufficientFundsError || /same account/.test(error.message);
            if (!expected) throw error;
          }
        }

        const { accounts, movements } = await scanLedger();
        // One movement per operation that succeeded; a refused one wrote nothing.
        expect(movements.length).toBe(movementsBefore + outcomes.filter((outcome) => outcome.status === 'fulfilled').length);
        const totals = new Map<string, Money>();
        for (const account of accounts) {
          totals.set(account.asset, (totals.get(account.asset) ?? new Money(0)).plus(account.balance));
          if (!isSystemParticipant(account.participant_code)) expect(account.balance.isNegative()).toBe(false);
        }
        for (const [asset, total] of totals) expect(`${asset} ${total.toFixed()}`).toBe(`${asset} 0`);

        const replayed = new Map<string, Money>();
        for (const movement of movements) {
          const perAsset = new Map<string, Money>();
          for (const leg of movement.legs) {
            const amount = readMoney(leg.amount);
            perAsset.set(leg.asset, (perAsset.get(leg.asset) ?? new Money(0)).plus(amount));
            const key = accountKey(leg);
            replayed.set(key, (replayed.get(key) ?? new Money(0)).plus(amount));
          }
          for (const sum of perAsset.values()) expect(sum.isZero()).toBe(true);
        }
        // Both ways: every account's balance is its movements' sum, and every account a movement names exists.
        const booked = Object.fromEntries(accounts.map((account) => [accountKey(account), account.balance.toFixed()]));
        expect(Object.fromEntries([...replayed].map(([key, sum]) => [key, sum.toFixed()]))).toEqual(booked);
      }),
      { numRuns: 12 },
    );
  });
});
