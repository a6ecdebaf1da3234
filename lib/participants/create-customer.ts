import { NO_REQUEST_CLAIM, type RequestClaim } from '../store/windows.js';
import { validateCustomer } from '../domain/customers.js';
import { createCustomer as storeCustomer } from '../store/participants.js';
import { encryptSecret } from '../crypto/secret-cipher.js';
import { acceptOrThrow, echoCustomer, emailAlreadyUsed } from './customer-fields.js';
import type { AppContext } from '../context.js';

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
  const verdict = validateCustomer(body, ctx.clock.nowMs());
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
