import { NO_REQUEST_CLAIM, type RequestClaim } from '../store/windows.js';
import { phoneNumberIn, type PhoneNumberParser, validateCustomerWith } from '../domain/customer-request.js';
import { createCustomer as storeCustomer } from '../store/participants.js';
import { encryptSecret } from '../crypto/secret-cipher.js';
import { acceptOrThrow, echoCustomer, emailAlreadyUsed } from './customer-fields.js';
import type { AppContext } from '../context.js';

/**
 * The phone number parser `body`'s rules need. With its metadata it is about 50 KiB of this function's code, on
 * an optional field, so it is loaded for the first body that carries a phone number rather than when the function
 * is imported (Node keeps the loaded module, so later bodies wait for nothing). A body without one is never asked
 * to parse a number.
 */
async function phoneNumberParserFor(body: unknown): Promise<PhoneNumberParser> {
  if (phoneNumberIn(body)) return (await import('../domain/phone-numbers.js')).parsePhoneNumber;
  return () => {
    throw new Error('unreachable: a customer body without a phone_number parsed one');
  };
}

/**
 * `POST /participants/customers/new`: onboards an adult customer (who may later be named a minor's
 * custodian), approved at once. Returns the response `message`.
 */
export async function createCustomer(
  ctx: AppContext,
  platformCode: string,
  body: unknown,
  claim: RequestClaim = NO_REQUEST_CLAIM,
): Promise<Record<string, unknown>> {
  const nowMs = ctx.clock.nowMs();
  const verdict = validateCustomerWith(body, nowMs, await phoneNumberParserFor(body));
  const customer = acceptOrThrow(verdict, [], await emailAlreadyUsed(ctx, platformCode, body));
  // The tax id is stored only encrypted, like an API secret; the store never sees the plaintext.
  const { tax_id, ...rest } = customer;
  const sealed = tax_id === undefined ? rest : { ...rest, tax_id_encrypted: await encryptSecret(ctx, tax_id) };
  const answer = (created: { participant_code: string; status: string }) => ({
    ...echoCustomer(customer),
    platform_code: platformCode,
    participant_code: created.participant_code,
    status: created.status,
  });
  // The request's claim stores the answer with the new customer (see `RequestClaim`).
  return answer(await storeCustomer(ctx, platformCode, sealed, (created) => claim(answer(created))));
}
