import { describe, expect, it } from 'vitest';
import {
  chunked,
  distributionFingerprint,
  ESCROW_LANES,
  laneOf,
  MAX_RECIPIENTS,
  recipientListProblems,
  recipientsPerChunk,
} from '../../lib/domain/awards.js';
import { Money } from '../../lib/domain/money.js';

describe('award distribution rules', () => {
  it('fits 15 recipients in a 100-item transaction (7 fixed items, 6 per recipient: balance and its event, account movement entry, trade and its event, status check)', () => {
    expect(recipientsPerChunk(100)).toBe(15);
    expect(recipientsPerChunk(13)).toBe(1);
    expect(() => recipientsPerChunk(12)).toThrow();
  });

  it('chunks keep order and sizes', () => {
    const items = Array.from({ length: 100 }, (_, i) => i);
    const chunks = chunked(items, 48);
    expect(chunks.map((chunk) => chunk.length)).toEqual([48, 48, 4]);
    expect(chunks.flat()).toEqual(items);
    expect(chunked([], 48)).toEqual([]);
    expect(chunked(Array(MAX_RECIPIENTS).fill(0), 48)).toHaveLength(21);
  });

  it('spreads chunks over the escrow lanes round-robin, so lanes carry the same number of chunks, give or take one', () => {
    const perLane = new Map<number, number>();
    for (let index = 0; index < 67; index++) perLane.set(laneOf(index), (perLane.get(laneOf(index)) ?? 0) + 1);
    expect(perLane.size).toBe(ESCROW_LANES);
    expect(Math.max(...perLane.values()) - Math.min(...perLane.values())).toBeLessThanOrEqual(1);
    expect([0, 1, 7, 8, 9].map(laneOf)).toEqual([0, 1, 7, 0, 1]);
  });

  it('names repeated codes once each, and bounds the list', () => {
    expect(recipientListProblems(['A', 'B', 'A', 'C', 'B', 'A'])).toEqual([
      'participant_codes: listed more than once: A, B',
    ]);
    expect(recipientListProblems([])).toEqual(['participant_codes: name at least one customer']);
    expect(recipientListProblems(Array.from({ length: 1001 }, (_, i) => `C${i}`))).toEqual([
      'participant_codes: at most 1000 customers per distribution, got 1001',
    ]);
    expect(recipientListProblems(['A'])).toEqual([]);
  });

  it('fingerprints a request by value: equal amounts match, another order or recipient does not', () => {
    const base = { asset: 'BTC', quantity: new Money('0.10'), quotedCurrency: 'USD', participantCodes: ['A', 'B'] };
    expect(distributionFingerprint({ ...base, quantity: new Money('0.1') })).toBe(distributionFingerprint(base));
    expect(distributionFingerprint({ ...base, participantCodes: ['B', 'A'] })).not.toBe(distributionFingerprint(base));
    expect(distributionFingerprint({ ...base, quantity: new Money('0.11') })).not.toBe(distributionFingerprint(base));
  });
});
