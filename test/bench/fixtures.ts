import { randomUUID } from 'node:crypto';
import { deposit } from '../../lib/ledger/deposit.js';
import { expectStatus, type BenchPlatform } from './client.js';
import { benchCtx } from './stack.js';

const YEAR_MS = 365.25 * 24 * 3600 * 1000;

let variation = 0;

/**
 * `base` plus a few units in the last of `decimals` places, different on every call: a POST whose body
 * repeats within a second repeats its signature, which replay protection refuses.
 */
export function varied(base: string, decimals: number): string {
  variation = (variation % 9_999) + 1;
  return (Number(base) + variation / 10 ** decimals).toFixed(decimals);
}

/** The UTC day about `years` years ago, as `YYYY-MM-DD`. */
function yearsAgo(years: number): string {
  return new Date(benchCtx().clock.nowMs() - years * YEAR_MS).toISOString().slice(0, 10);
}

export function adultBody(): Record<string, unknown> {
  return {
    first_name: 'Grace',
    last_name: 'Hopper',
    email: `bench.${randomUUID()}@example.com`,
    address_one: '1 Bench Street',
    city: 'Springfield',
    state: 'IL',
    zip: '62701',
    country: 'United States',
    date_of_birth: yearsAgo(40),
    id_number_type: 'non_in_passport',
    id_number: 'X1234567',
    id_issuing_authority: 'US',
    signed_timestamp: benchCtx().clock.nowMs() - 60_000,
  };
}

export function minorBody(custodianCode: string): Record<string, unknown> {
  return {
    first_name: 'Alan',
    last_name: 'Hopper',
    email: `bench.minor.${randomUUID()}@example.com`,
    address_one: '1 Bench Street',
    city: 'Springfield',
    state: 'Illinois',
    zip: '62701',
    country: 'USA',
    date_of_birth: yearsAgo(10),
    id_number_type: 'in_passport',
    id_number: 'P7654321',
    utma_signed_timestamp: benchCtx().clock.nowMs() - 60_000,
    custodian_participant_code: custodianCode,
    custodian_relationship: 'parent',
  };
}

/** An approved adult customer, onboarded through POST /participants/customers/new. */
export async function newCustomer(platform: BenchPlatform): Promise<string> {
  const response = await platform.client.post('/participants/customers/new', adultBody());
  expectStatus(response, 201, 'POST /participants/customers/new');
  return response.body.message.participant_code as string;
}

/** A spot BTC/USD trade report between two customers: the buyer receives BTC, the seller USD. */
export function tradeBody(platformCode: string, buyer: string, seller: string): Record<string, unknown> {
  return {
    client_trade_id: `bench-${randomUUID()}`,
    session_id: '',
    trade_reporter: 'bench@platform.example',
    platform_code: platformCode,
    symbol: 'BTC/USD',
    product_type: 'spot',
    trade_type: 'regular',
    trade_price: '100',
    trade_quantity: '0.001',
    physical_delivery: true,
    transaction_timestamp: benchCtx().clock.nowMs() - 1_000,
    parties_anonymous: false,
    parties: [
      { side: 'buy', participant_code: buyer, asset: 'BTC', settling: true },
      { side: 'sell', participant_code: seller, asset: 'USD', settling: true },
    ],
  };
}

/**
 * A buyer holding USD and a seller holding BTC, each enough for `trades` of the trades `tradeBody` makes
 * (0.10 USD against 0.001 BTC), so every such trade can settle at its first attempt.
 */
export async function fundedTradePair(
  platform: BenchPlatform,
  trades: number,
): Promise<{ buyer: string; seller: string }> {
  const [buyer, seller] = [await newCustomer(platform), await newCustomer(platform)];
  await deposit(benchCtx(), { reference: randomUUID(), participantCode: buyer, asset: 'USD', amount: String(trades) });
  await deposit(benchCtx(), {
    reference: randomUUID(),
    participantCode: seller,
    asset: 'BTC',
    amount: String(trades * 0.001 + 1),
  });
  return { buyer, seller };
}
