import { NotFoundError, ValidationError } from '../domain/errors.js';
import { getAccountById } from '../store/ledger.js';
import { accountView } from './account-view.js';
import type { AppContext } from '../context.js';

/** Account ids are UUIDs (`accountIdOf`); anything else can't name an account. */
export const ACCOUNT_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The platform's (or its customers') account with this id. A malformed id is a 400; an unknown id and
 * another platform's account are the same 404, so the answer never tells that the account exists elsewhere.
 */
export async function findAccountOfPlatform(ctx: AppContext, platformCode: string, accountId: string) {
  if (!ACCOUNT_ID_PATTERN.test(accountId)) throw new ValidationError(['account_id: must be an account id (a UUID)']);
  const account = await getAccountById(ctx, accountId.toLowerCase());
  if (!account || account.platform_code !== platformCode) throw new NotFoundError(`account not found: ${accountId}`);
  return account;
}

/** `GET /accounts/{account_id}`. */
export async function getAccountOfPlatform(ctx: AppContext, platformCode: string, accountId: string) {
  return { message: accountView(await findAccountOfPlatform(ctx, platformCode, accountId)) };
}
