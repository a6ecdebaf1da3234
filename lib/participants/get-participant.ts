import { isValidEmail, normaliseEmail } from '../domain/email.js';
import { NotFoundError, ValidationError } from '../domain/errors.js';
import { keptCustomerCodeByEmail, getParticipantOfPlatform } from '../store/participants.js';
import { participantView } from './list-participants.js';
import type { AppContext } from '../context.js';

/** A path segment as the client meant it: API Gateway may hand it on still percent-encoded (`%40`). */
function decodedSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * `GET /participants/{email}`: the platform's customer with this e-mail (compared case-insensitively, as
 * uniqueness is). A malformed e-mail is a 400; an e-mail no customer of this platform has is a 404, whether
 * or not another platform has such a customer.
 */
export async function getParticipantByEmail(ctx: AppContext, platformCode: string, rawEmail: string) {
  const email = decodedSegment(rawEmail).trim();
  if (!isValidEmail(email)) throw new ValidationError(['email: must be a valid e-mail address']);
  const code = await keptCustomerCodeByEmail(ctx, platformCode, normaliseEmail(email));
  const participant = code === undefined ? undefined : await getParticipantOfPlatform(ctx, platformCode, code);
  if (!participant) throw new NotFoundError('participant not found');
  return { message: participantView(participant) };
}
