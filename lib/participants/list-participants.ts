import { normaliseEmail } from '../domain/email.js';
import { ValidationError } from '../domain/errors.js';
import { listEnvelope } from '../domain/list-envelope.js';
import {
  keptCustomerCodeByEmail,
  getParticipantOfPlatform,
  pageOfParticipants,
  type Participant,
} from '../store/participants.js';
import { echoStoredCustomer } from './customer-fields.js';
import type { AppContext } from '../context.js';

interface ParticipantFilters {
  /** Case-insensitive exact match on a customer's e-mail. */
  email?: string;
  participant_code?: string;
  page: number;
  page_size: number;
  cursor?: string;
}

/** What a platform sees of one of its participants: identity and state, plus a customer's own fields. */
export function participantView(participant: Participant): Record<string, unknown> {
  const isCustomer = participant.kind === 'customer';
  return {
    participant_code: participant.participant_code,
    platform_code: participant.platform_code,
    kind: participant.kind,
    status: participant.status,
    ...(isCustomer && { is_minor: participant.is_minor === true }),
    created_at: participant.created_at,
    ...(isCustomer && echoStoredCustomer(participant)),
  };
}

/**
 * `GET /participants`: the caller platform's own participant and its customers, oldest first. Filters are
 * answered by direct reads (the e-mail claim, the participant item) and always scoped to the platform, so
 * another platform's participants never appear, whatever is asked.
 */
export async function listParticipants(ctx: AppContext, platformCode: string, filters: ParticipantFilters) {
  const position = { pageSize: filters.page_size };
  if (filters.email === undefined && filters.participant_code === undefined) {
    const found = await pageOfParticipants(ctx, platformCode, {
      page: filters.page,
      pageSize: filters.page_size,
      cursor: filters.cursor,
    });
    return listEnvelope(found.items.map(participantView), {
      ...position,
      page: found.page,
      count: found.count,
      nextCursor: found.nextCursor,
    });
  }
  let participant: Awaited<ReturnType<typeof getParticipantOfPlatform>>;
  if (filters.email !== undefined) {
    const code = await keptCustomerCodeByEmail(ctx, platformCode, normaliseEmail(filters.email));
    const matches = code !== undefined && (filters.participant_code === undefined || filters.participant_code === code);
    participant = matches ? await getParticipantOfPlatform(ctx, platformCode, code) : undefined;
  } else {
    participant = await getParticipantOfPlatform(ctx, platformCode, filters.participant_code!);
  }
  // At most one match: page 1 holds it, every later page (or any cursor: none was ever issued) is empty.
  if (filters.cursor !== undefined)
    throw new ValidationError([`cursor: not a cursor this list issued for these filters; start again without cursor`]);
  const items = participant && filters.page === 1 ? [participantView(participant)] : [];
  return listEnvelope(items, { ...position, page: filters.page, count: participant ? 1 : 0, nextCursor: null });
}
