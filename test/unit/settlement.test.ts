import { describe, expect, it } from 'vitest';
import { Money } from '../../lib/domain/money.js';
import {
  decideAttempt,
  firstAttemptAtMs,
  isPastDeadline,
  obligations,
  settlementDeadlineMs,
  type SettlementParty,
  type SettlementTrade,
} from '../../lib/domain/settlement.js';
import { validateTradeReport } from '../../lib/domain/trade-report.js';

const ACCEPTED_MS = Date.UTC(2026, 10, 21, 12, 0, 0);
const HOUR_MS = 3_600_000;

function trade(overrides: Partial<SettlementTrade> = {}, parties?: Partial<SettlementParty>[]): SettlementTrade {
  const base: SettlementParty[] = [
    {
      side: 'buy',
      participant_code: 'BUYER1',
      account_label: 'general',
      asset: 'BTC',
      amount: '2.00000000',
      settling: true,
    },
    {
      side: 'sell',
      participant_code: 'SELLR1',
      account_label: 'desk',
      asset: 'USD',
      amount: '50001.00',
      settling: true,
    },
  ];
  return {
    product_type: 'spot',
    accepted_timestamp: ACCEPTED_MS,
    settlement_timestamp: null,
    expiry_timestamp: null,
    parties: base.map((p, i) => ({ ...p, ...(parties?.[i] ?? {}) })),
    ...overrides,
  };
}

const deadline = ACCEPTED_MS + 24 * HOUR_MS;
const before = deadline - 1;

describe('obligations', () => {
  it('the seller delivers the base the buyer receives; the buyer delivers the quote the seller receives', () => {
    expect(obligations(trade())).toEqual([
      {
        party: 0,
        side: 'buy',
        participant_code: 'BUYER1',
        account_label: 'general',
        deliver_asset: 'USD',
        deliver_amount: '50001.00',
        receive_asset: 'BTC',
        receive_amount: '2.00000000',
      },
      {
        party: 1,
        side: 'sell',
        participant_code: 'SELLR1',
        account_label: 'desk',
        deliver_asset: 'BTC',
        deliver_amount: '2.00000000',
        receive_asset: 'USD',
        receive_amount: '50001.00',
      },
    ]);
  });

  it('only settling parties have obligations, whatever the order of the parties', () => {
    const buyerFirst = trade();
    const reversed = { ...buyerFirst, parties: [...buyerFirst.parties].reverse() };
    const onlyBuyer = { ...reversed, parties: reversed.parties.map((p) => ({ ...p, settling: p.side === 'buy' })) };
    expect(obligations(onlyBuyer)).toEqual([
      expect.objectContaining({ party: 1, side: 'buy', deliver_asset: 'USD', deliver_amount: '50001.00' }),
    ]);
  });

  it('refuses a trade without one party per side', () => {
    expect(() => obligations(trade({}, [{}, { side: 'buy' }]))).toThrow(/exactly one buy and one sell/);
  });
});

describe('decideAttempt', () => {
  it('settles when every settling party can deliver, exactly enough included', () => {
    const decision = decideAttempt({
      trade: trade(),
      balances: { buy: '50001', sell: new Money('2') },
      nowMs: before,
      deadlineMs: deadline,
    });
    expect(decision.kind).toBe('settle');
    expect(decision.settlement_state).toBe('settled');
    expect(decision.parties.map((p) => p.settlement_state)).toEqual(['settled', 'settled']);
    if (decision.kind === 'settle') expect(decision.obligations).toHaveLength(2);
  });

  it('leaves the trade outstanding before the deadline, marking who is ready', () => {
    const decision = decideAttempt({
      trade: trade(),
      balances: { buy: '50000.99', sell: '5' },
      nowMs: before,
      deadlineMs: deadline,
    });
    expect(decision).toEqual({
      kind: 'outstanding',
      settlement_state: 'obligations_outstanding',
      parties: [
        { party: 0, side: 'buy', settlement_state: 'obligations_outstanding', shortfall: '0.01' },
        { party: 1, side: 'sell', settlement_state: 'current_obligations_met', shortfall: '0' },
      ],
    });
  });

  it('treats a missing balance as an empty account', () => {
    const decision = decideAttempt({ trade: trade(), balances: {}, nowMs: before, deadlineMs: deadline });
    expect(decision.parties.map((p) => [p.settlement_state, p.shortfall])).toEqual([
      ['obligations_outstanding', '50001'],
      ['obligations_outstanding', '2'],
    ]);
  });

  it('defaults at the deadline: the ready party is counterparty_defaulted, the other defaulted', () => {
    const decision = decideAttempt({
      trade: trade(),
      balances: { buy: '60000', sell: '1.5' },
      nowMs: deadline,
      deadlineMs: deadline,
    });
    expect(decision.kind).toBe('default');
    expect(decision.settlement_state).toBe('defaulted');
    expect(decision.parties.map((p) => [p.side, p.settlement_state, p.shortfall])).toEqual([
      ['buy', 'counterparty_defaulted', '0'],
      ['sell', 'defaulted', '0.5'],
    ]);
  });

  it('defaults both parties when neither could deliver', () => {
    const decision = decideAttempt({ trade: trade(), balances: {}, nowMs: deadline + HOUR_MS, deadlineMs: deadline });
    expect(decision.parties.map((p) => p.settlement_state)).toEqual(['defaulted', 'defaulted']);
  });

  it('still settles a trade that is fully funded when the last attempt runs after the deadline', () => {
    const decision = decideAttempt({
      trade: trade(),
      balances: { buy: '50001', sell: '2' },
      nowMs: deadline + 1,
      deadlineMs: deadline,
    });
    expect(decision.kind).toBe('settle');
  });

  it('ignores the balance of a party that does not settle here, which never defaults', () => {
    const oneSided = trade({}, [{}, { settling: false }]);
    const settle = decideAttempt({ trade: oneSided, balances: { buy: '50001' }, nowMs: before, deadlineMs: deadline });
    expect(settle.kind).toBe('settle');
    const fail = decideAttempt({ trade: oneSided, balances: { buy: '1' }, nowMs: deadline, deadlineMs: deadline });
    expect(fail.parties.map((p) => p.settlement_state)).toEqual(['defaulted', 'counterparty_defaulted']);
  });

  it('works on a validated trade report', () => {
    const report = validateTradeReport(
      {
        client_trade_id: 't-1',
        session_id: '',
        trade_reporter: 'ops',
        platform_code: 'PLAT01',
        symbol: 'BTC/USD',
        product_type: 'spot',
        trade_type: 'regular',
        trade_price: '10000.0008',
        trade_quantity: '10',
        physical_delivery: true,
        transaction_timestamp: ACCEPTED_MS,
        parties_anonymous: false,
        parties: [
          { side: 'sell', participant_code: 'SELLR1', asset: 'USD' },
          { side: 'buy', participant_code: 'BUYER1', asset: 'BTC' },
        ],
      },
      { platformCode: 'PLAT01', nowMs: ACCEPTED_MS },
    );
    if (!report.ok) throw new Error(report.errors.join('; '));
    const stored: SettlementTrade = { ...report.value, accepted_timestamp: ACCEPTED_MS };
    expect(obligations(stored).map((o) => [o.side, o.deliver_asset, o.deliver_amount])).toEqual([
      ['sell', 'BTC', '10.00000000'],
      ['buy', 'USD', '100000.01'],
    ]);
    const decision = decideAttempt({
      trade: stored,
      balances: { buy: '100000.00', sell: '10' },
      nowMs: before,
      deadlineMs: deadline,
    });
    expect(decision.parties.map((p) => [p.side, p.settlement_state])).toEqual([
      ['sell', 'current_obligations_met'],
      ['buy', 'obligations_outstanding'],
    ]);
  });
});

describe('deadlines', () => {
  const spotDeadlineMs = 24 * HOUR_MS;

  it('a forward defaults at its expiry', () => {
    const expiry = ACCEPTED_MS + 30 * 24 * HOUR_MS;
    expect(settlementDeadlineMs(trade({ product_type: 'forward', expiry_timestamp: expiry }), spotDeadlineMs)).toBe(
      expiry,
    );
  });

  it('a spot trade defaults the configured time after acceptance', () => {
    expect(settlementDeadlineMs(trade(), spotDeadlineMs)).toBe(ACCEPTED_MS + spotDeadlineMs);
    // expiry_timestamp is for forwards only.
    expect(settlementDeadlineMs(trade({ expiry_timestamp: ACCEPTED_MS + 1 }), spotDeadlineMs)).toBe(
      ACCEPTED_MS + spotDeadlineMs,
    );
  });

  it('a spot trade scheduled for later gets the whole window after its first attempt', () => {
    const later = ACCEPTED_MS + 3 * 24 * HOUR_MS;
    expect(firstAttemptAtMs(trade({ settlement_timestamp: later }))).toBe(later);
    expect(settlementDeadlineMs(trade({ settlement_timestamp: later }), spotDeadlineMs)).toBe(later + spotDeadlineMs);
    // A settlement time already past at acceptance starts at acceptance.
    expect(firstAttemptAtMs(trade({ settlement_timestamp: ACCEPTED_MS - HOUR_MS }))).toBe(ACCEPTED_MS);
  });

  it('a forward reported without expiry falls back to the spot rule', () => {
    expect(settlementDeadlineMs(trade({ product_type: 'forward' }), spotDeadlineMs)).toBe(ACCEPTED_MS + spotDeadlineMs);
  });

  it('reaching the deadline is being past it', () => {
    expect(isPastDeadline(deadline - 1, deadline)).toBe(false);
    expect(isPastDeadline(deadline, deadline)).toBe(true);
  });
});
