import { NO_REQUEST_CLAIM, type RequestClaim } from '../store/windows.js';
import { MAX_TEXT_LENGTH, validateMinor } from '../domain/customer-request.js';
import { createCustomer as storeCustomer, getParticipantOfPlatform } from '../store/participants.js';
import { acceptOrThrow, echoCustomer, emailAlreadyUsed } from './customer-fields.js';
import type { AppContext } from '../context.js';

const FIELD = 'custodian_participant_code';

/**
 * Why the named custodian can't take a minor, or undefined when it can (or when the code itself is
 * missing or malformed, which the pure rules already report).
 *
 * A custodian is a field of the body, not the resource addressed, so its problems are 400s listed with the
 * body's others rather than a 404. An unknown code and another platform's code get the same words, so the
 * answer never reveals that a participant exists elsewhere.
 */
async function custodianProblem(ctx: AppContext, platformCode: string, body: unknown): Promise<string | undefined> {
  const raw = (body as { custodian_participant_code?: unknown } | null)?.custodian_participant_code;
  if (typeof raw !== 'string') return undefined;
  const code = raw.trim();
  if (code === '' || code.length > MAX_TEXT_LENGTH) return undefined;
  const custodian = await getParticipantOfPlatform(ctx, platformCode, code);
  if (!custodian) return `${FIELD}: no customer with this code on this platform`;
  if (custodian.kind !== 'customer')
    return `${FIELD}: must be a customer of the platform, not the platform's own participant`;
  if (custodian.is_minor === true) return `${FIELD}: a minor cannot be a custodian`;
  if (custodian.status !== 'approved')
    return `${FIELD}: the custodian must be an approved customer (status is ${custodian.status})`;
  return undefined;
}

/**
 * `POST /participants/customers/minor`: onboards a minor linked to an approved adult customer of the same
 * platform, approved at once. Returns the response `message`. The custodian is checked here for a precise
 * answer and again inside the write transaction, which is what guarantees it.
 */
export async function createMinor(
  ctx: AppContext,
  platformCode: string,
  body: unknown,
  claim: RequestClaim = NO_REQUEST_CLAIM,
): Promise<Record<string, unknown>> {
  const verdict = validateMinor(body, ctx.clock.nowMs());
  const [emailTaken, custodian] = await Promise.all([
    emailAlreadyUsed(ctx, platformCode, body),
    custodianProblem(ctx, platformCode, body),
  ]);
  const minor = acceptOrThrow(verdict, custodian === undefined ? [] : [custodian], emailTaken);
  const answer = (created: { participant_code: string; status: string }) => ({
    ...echoCustomer(minor),
    platform_code: platformCode,
    participant_code: created.participant_code,
    status: created.status,
  });
  // The request's claim stores the answer with the new customer (see `RequestClaim`).
  return answer(await storeCustomer(ctx, platformCode, minor, (created) => claim(answer(created))));
}
