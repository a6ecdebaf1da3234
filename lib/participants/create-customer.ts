import { clock } from '../clock.js';
import { validateCustomer } from '../domain/customers.js';
import { createCustomer as storeCustomer } from '../store/participants.js';
import { acceptOrThrow, echoCustomer, emailAlreadyUsed } from './customer-fields.js';

/**
 * `POST /participants/customers/new`: onboards an adult customer (who may later be named a minor's
 * custodian), approved at once. Returns the response `message`.
 */
export async function createCustomer(platformCode: string, body: unknown): Promise<Record<string, unknown>> {
  const verdict = validateCustomer(body, clock.nowMs());
  const customer = acceptOrThrow(verdict, [], await emailAlreadyUsed(platformCode, body));
  const created = await storeCustomer(platformCode, customer);
  return { ...echoCustomer(customer), platform_code: platformCode, participant_code: created.participant_code, status: created.status };
}
