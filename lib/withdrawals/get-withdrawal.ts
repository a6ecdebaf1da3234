import { NotFoundError, ValidationError } from '../domain/errors.js';
import { getWithdrawal } from '../store/withdrawals.js';
import { withdrawalView } from '../domain/withdrawals.js';
import type { AppContext } from '../context.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `GET /withdrawals/requests/{id}`: one of the platform's withdrawal requests, as a one-element list. A malformed id is a 400; an
 * unknown id and another platform's request are the same 404.
 */
export async function getWithdrawalOfPlatform(ctx: AppContext, platformCode: string, id: string) {
  if (!UUID.test(id)) throw new ValidationError(['id: must be a withdrawal request id (a UUID)']);
  const withdrawal = await getWithdrawal(ctx, id.toLowerCase());
  if (!withdrawal || withdrawal.platform_code !== platformCode)
    throw new NotFoundError(`withdrawal request not found: ${id}`);
  // A one-element array, as the reference answers this route: its clients read `message[0]`.
  return { message: [withdrawalView(withdrawal)] };
}
