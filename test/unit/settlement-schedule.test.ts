import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../lib/config.js';
import {
  dueAfterAcceptanceMs,
  dueAfterStepMs,
  executionNameOf,
  legAt,
  legEndsAtMs,
  MAX_LEG_SECONDS,
  SETTLEMENT_DUE_MARGIN_MS,
} from '../../lib/domain/settlement-schedule.js';
import { settlementExecutionInput } from '../../lib/domain/workflow-io.js';

const DAY_MS = 86_400_000;
const LEG_SECONDS = 30 * 86_400;
const TRADE_ID = '3f1c6c1e-6a55-4a55-9d35-2f1b7c3c9a10';
const accepted = Date.UTC(2030, 0, 1);
const trade = { accepted_timestamp: accepted, settlement_timestamp: accepted + 2 * 365 * DAY_MS };

describe('settlement legs', () => {
  it('split a settlement two years out into 30-day legs, the first named by the trade id, each under a year', () => {
    const settlementLeg = legAt(trade, trade.settlement_timestamp, LEG_SECONDS);
    expect(settlementLeg).toBe(25);
    const inputs = Array.from({ length: settlementLeg }, (_, i) =>
      settlementExecutionInput(TRADE_ID, trade.settlement_timestamp, 3600, {
        number: i + 1,
        endsAtMs: legEndsAtMs(trade, i + 1, LEG_SECONDS),
      }),
    );
    // Every leg before the one holding the settlement time only waits and hands over; that one settles.
    expect(inputs.map((input) => input.continues)).toEqual([...Array(24).fill(true), false]);
    expect(inputs.map((input) => executionNameOf(input.trade_id, input.leg)).slice(0, 3)).toEqual([
      TRADE_ID,
      `${TRADE_ID}-2`,
      `${TRADE_ID}-3`,
    ]);
    for (const [index, input] of inputs.entries()) {
      const startsAt = index === 0 ? accepted : Date.parse(inputs[index - 1]!.leg_ends_at);
      expect(Date.parse(input.leg_ends_at) - startsAt).toBe(LEG_SECONDS * 1000);
      expect(executionNameOf(input.trade_id, input.leg).length).toBeLessThanOrEqual(80);
    }
    expect(MAX_LEG_SECONDS * 1000).toBeLessThan(365 * DAY_MS);
  });

  it('numbers a leg by the time alone, so every starter names the same execution', () => {
    expect(legAt(trade, accepted, LEG_SECONDS)).toBe(1);
    expect(legAt(trade, accepted + 30 * DAY_MS - 1, LEG_SECONDS)).toBe(1);
    expect(legAt(trade, accepted + 30 * DAY_MS, LEG_SECONDS)).toBe(2);
    // A clock a little behind the acceptance time is still in the first leg.
    expect(legAt(trade, accepted - 5_000, LEG_SECONDS)).toBe(1);
  });

  it('refuses a leg length past what one execution may last', () => {
    const env = { TABLE_NAME: 't', TTL_TABLE_NAME: 'u', SECRETS_LOCAL_KEY: 'k' };
    expect(parseConfig(env).SETTLEMENT_LEG_SECONDS).toBe(LEG_SECONDS);
    expect(parseConfig({ ...env, SETTLEMENT_LEG_SECONDS: String(MAX_LEG_SECONDS) }).SETTLEMENT_LEG_SECONDS).toBe(
      MAX_LEG_SECONDS,
    );
    expect(() => parseConfig({ ...env, SETTLEMENT_LEG_SECONDS: String(365 * 86_400) })).toThrow(
      /SETTLEMENT_LEG_SECONDS/,
    );
  });
});

describe('when an open trade is due', () => {
  it('is its first attempt (plus the margin) when accepted, a session after each settlement step', () => {
    expect(dueAfterAcceptanceMs(trade)).toBe(trade.settlement_timestamp + SETTLEMENT_DUE_MARGIN_MS);
    expect(dueAfterAcceptanceMs({ accepted_timestamp: accepted, settlement_timestamp: null })).toBe(
      accepted + SETTLEMENT_DUE_MARGIN_MS,
    );
    // A settlement time already past is attempted at once.
    expect(dueAfterAcceptanceMs({ accepted_timestamp: accepted, settlement_timestamp: accepted - DAY_MS })).toBe(
      accepted + SETTLEMENT_DUE_MARGIN_MS,
    );
    expect(dueAfterStepMs(accepted, 3600)).toBe(accepted + 3_600_000 + SETTLEMENT_DUE_MARGIN_MS);
  });
});
