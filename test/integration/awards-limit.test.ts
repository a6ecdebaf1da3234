import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { ESCROW_LANES, MAX_RECIPIENTS, recipientsPerChunk } from '../../lib/domain/awards.js';
import { accountIdOf } from '../../lib/domain/ledger.js';
import { getDistribution } from '../../lib/store/awards.js';
import { balanceOf } from '../../lib/store/ledger.js';
import { MAX_TRANSACTION_ITEMS } from '../../lib/store/table/transaction-items.js';
import { customerBalances, escrowBalance, pool } from '../support/awards.js';
import { ctx } from '../support/context.js';
import { customersInBulk } from '../support/customers.js';
import { fund } from '../support/ledger.js';
import { setPrice } from '../support/pricing.js';
import { newPlatform } from '../support/service.js';

/**
 * The largest distribution a request may name, in the one request the local Lambda gives 29 s: one of the
 * paced files (vitest.config.ts), run alone, as its claim holds only if its requests keep pace with real time.
 * Every other claim about distributions is in awards.test.ts, which runs beside other files.
 */

// Prices are shared by every test file of the run; this file prices BTC/EUR only.
beforeAll(async () => {
  await setPrice('BTC', 'EUR', '40000');
});

describe('POST /awards/distribute at its limit', () => {
  it('pays the most customers a request may name (1,000) in 67 chunks of at most 15: its record, every chunk (with room for the list counters, and a balance event, an account movement entry, a trade event and a status check per recipient) and every lane fit one transaction', async () => {
    const platform = await newPlatform();
    // Written 49 to a transaction: the distribution is under test here, not the customers' creation.
    const customers = await customersInBulk(platform.platformCode, MAX_RECIPIENTS);
    await fund(platform.participantCode, 'BTC', '1', 'awards');
    const requestId = randomUUID();
    const response = await platform.post(
      '/awards/distribute',
      { asset: 'BTC', quantity: '0.00000100', participant_codes: customers },
      { headers: { 'X-Request-Id': requestId } },
    );
    expect(response.status, response.text).toBe(201);
    expect(response.body.message.confirms).toHaveLength(MAX_RECIPIENTS);
    const stored = await getDistribution(ctx, platform.platformCode, requestId);
    expect(stored?.distribution.status).toBe('completed');
    expect(recipientsPerChunk(MAX_TRANSACTION_ITEMS)).toBe(15);
    expect(stored?.chunks.length).toBe(67);
    expect(new Set(stored?.chunks.map((chunk) => accountIdOf(chunk.escrow))).size).toBe(ESCROW_LANES);
    expect((await balanceOf(ctx, pool(platform))).toFixed()).toBe('0.999');
    expect((await escrowBalance(platform)).toFixed()).toBe('0');
    const paid = await customerBalances(platform, customers);
    expect(paid.every((balance) => balance === '0.000001')).toBe(true);
  }, 120_000);
});
