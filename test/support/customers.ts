import { randomUUID } from 'node:crypto';
import { parseCustomer } from '../../lib/domain/customers.js';
import { createCustomer } from '../../lib/store/participants.js';
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
