import { randomUUID } from 'node:crypto';
import { parseCustomer } from '../../lib/domain/customers.js';
import { deposit } from '../../lib/ledger/deposit.js';
import { setReferencePrice } from '../../lib/pricing/price-source.js';
import { createCustomer } from '../../lib/store/participants.js';
import { expectStatus, type BenchPlatform } from './client.js';
import { adultBody } from './fixtures.js';
import { describeCalls, type DynamoMeter } from './stack.js';
import { benchCtx } from './stack.js';

export interface AwardsResult {
  /** Seconds for one POST /awards/distribute to `recipients` customers. */
  seconds: number;
  recipients: number;
  callsPerRequest: number;
  calls: string;
}

const EACH = '0.0001';

/**
 * awards_1000_s: one POST /awards/distribute naming `recipients` customers (the most one request may),
 * from a pool bought through POST /awards/fund. The customers are created through the store's onboarding
 * path, not HTTP: a thousand onboarding requests would only slow the setup down.
 */
export async function measureAwards(
  platform: BenchPlatform,
  meter: DynamoMeter,
  recipients: number,
): Promise<AwardsResult> {
  await setReferencePrice(benchCtx(), 'BTC', 'USD', '40000');
  await deposit(benchCtx(), {
    reference: randomUUID(),
    participantCode: platform.participantCode,
    asset: 'USD',
    amount: '1000000',
  });
  const pool = (Number(EACH) * recipients).toFixed(8);
  const funded = await platform.client.post('/awards/fund', {
    underlying: 'BTC',
    quoted_currency: 'USD',
    quantity: pool,
  });
  expectStatus(funded, 201, 'POST /awards/fund');

  const customers: string[] = [];
  // Fifty at a time keeps DynamoDB Local from being flooded by a thousand transactions at once.
  for (let start = 0; start < recipients; start += 50) {
    const batch = Array.from({ length: Math.min(50, recipients - start) }, () =>
      createCustomer(benchCtx(), platform.platformCode, parseCustomer(adultBody(), benchCtx().clock.nowMs())),
    );
    customers.push(...(await Promise.all(batch)).map((created) => created.participant_code));
  }

  const before = meter.snapshot();
  const response = await platform.client.request(
    'POST',
    '/awards/distribute',
    { asset: 'BTC', quantity: EACH, participant_codes: customers },
    { headers: { 'X-Request-Id': randomUUID() } },
  );
  expectStatus(response, 201, 'POST /awards/distribute');
  const spent = meter.since(before);
  if (response.body.message.confirms.length !== recipients)
    throw new Error(`POST /awards/distribute confirmed ${response.body.message.confirms.length} of ${recipients}`);
  return {
    seconds: response.ms / 1000,
    recipients,
    callsPerRequest: spent.calls,
    calls: describeCalls(spent.byCommand),
  };
}
