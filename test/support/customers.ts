import { randomUUID } from 'node:crypto';
import { parseCustomer } from '../../lib/domain/customers.js';
import { newParticipantCode } from '../../lib/store/codes.js';
import { createCustomer, customerItems } from '../../lib/store/participants.js';
import { transactWrite } from '../../lib/store/table/transactions.js';
import type { TestPlatform } from './service.js';
import { ctx } from './context.js';

/** A valid body for POST /participants/customers/new (an adult in Illinois) with a fresh e-mail. */
export function customerBody(): Record<string, unknown> {
  return {
    first_name: 'Grace',
    last_name: 'Hopper',
    email: `grace.${randomUUID()}@example.com`,
    address_one: '1 Navy Way',
    city: 'Springfield',
    state: 'IL',
    zip: '62701',
    country: 'United States',
    date_of_birth: '1970-12-09',
    id_number_type: 'non_in_passport',
    id_number: 'P7654321',
    signed_timestamp: ctx.clock.nowMs() - 60_000,
  };
}

/** `count` customers created through HTTP, as a platform onboards them; their codes in creation order. */
export async function customersViaHttp(platform: TestPlatform, count: number): Promise<string[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const response = await platform.post('/participants/customers/new', customerBody());
      if (response.status !== 201) throw new Error(`create customer: ${response.status} ${response.text}`);
      return response.body.message.participant_code as string;
    }),
  );
}

/**
 * `count` customers written through the store (the onboarding rules, no HTTP): for tests that need hundreds.
 * The store's own creation path is used, so they are customers in every respect the service checks.
 */
export async function customersViaStore(platformCode: string, count: number): Promise<string[]> {
  const created: string[] = new Array(count);
  let next = 0;
  // At most 16 at once, so DynamoDB Local is not flooded by a thousand transactions; each creator takes the next
  // as soon as its last is written (batches of 50, each waiting for its slowest, took 8-13 s for 200 where this
  // took 6-8 s, on a loaded machine).
  await Promise.all(
    Array.from({ length: Math.min(16, count) }, async () => {
      for (let index = next++; index < count; index = next++) {
        created[index] = (
          await createCustomer(ctx, platformCode, parseCustomer(customerBody(), ctx.clock.nowMs()))
        ).participant_code;
      }
    }),
  );
  return created;
}

/** Customers per transaction in `customersInBulk`: two items each (the e-mail claim, the participant) and the count. */
const CUSTOMERS_PER_TRANSACTION = 49;

/**
 * `count` customers of `platformCode`, for a test about what happens to a thousand of them rather than about
 * creating them: the items `createCustomer` writes (`customerItems`: the e-mail claim and the participant, each
 * conditioned on being new, and the participants' count), 49 customers to a transaction instead of one. The
 * 1,000-recipient award distribution spent half its time creating its customers one by one.
 */
export async function customersInBulk(platformCode: string, count: number): Promise<string[]> {
  // Parsed once: the customers differ by e-mail (the claim's key) and code, as in the benchmark's seed.
  const customer = parseCustomer(customerBody(), ctx.clock.nowMs());
  const sizes = Array.from({ length: Math.ceil(count / CUSTOMERS_PER_TRANSACTION) }, (_, index) =>
    Math.min(CUSTOMERS_PER_TRANSACTION, count - index * CUSTOMERS_PER_TRANSACTION),
  );
  const written: string[][] = new Array(sizes.length);
  let next = 0;
  // Four transactions in flight: each updates one shard of the platform's count, so more would mostly conflict.
  await Promise.all(
    Array.from({ length: Math.min(4, sizes.length) }, async () => {
      for (let index = next++; index < sizes.length; index = next++) {
        written[index] = await customersInOneTransaction(platformCode, customer, sizes[index]!);
      }
    }),
  );
  return written.flat();
}

async function customersInOneTransaction(
  platformCode: string,
  customer: ReturnType<typeof parseCustomer>,
  size: number,
): Promise<string[]> {
  for (let attempt = 1; ; attempt++) {
    const codes = new Set<string>();
    while (codes.size < size) codes.add(newParticipantCode());
    const now = ctx.clock.nowMs();
    const items = [...codes].flatMap((code) => {
      const email = `grace.${randomUUID()}@example.com`;
      return customerItems(ctx, platformCode, { ...customer, email, email_normalized: email }, code, now);
    });
    try {
      await transactWrite(ctx, items);
      return [...codes];
    } catch (error) {
      // A drawn code is taken (createCustomer draws again too): nothing was written; draw them all again.
      if (attempt < 5 && (error as Error).name === 'ParticipantCodeTakenError') continue;
      throw error;
    }
  }
}
