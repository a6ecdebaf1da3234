import { normaliseEmail } from '../domain/customers.js';
import { paginate } from '../http/pagination.js';
import { readInteger } from '../store/numbers.js';
import { customerCodeByEmail, getParticipantOfPlatform, listParticipantsOfPlatform } from '../store/participants.js';
import { echoStoredCustomer } from './customer-fields.js';

export interface ParticipantFilters {
  /** Case-insensitive exact match on a customer's e-mail. */
  email?: string;
  participant_code?: string;
  page: number;
  page_size: number;
}

/** What a platform sees of one of its participants: identity and state, plus a customer's own fields. */
function participantView(item: Record<string, unknown>): Record<string, unknown> {
  const isCustomer = item.kind === 'customer';
  return {
    participant_code: item.participant_code,
    platform_code: item.platform_code,
    kind: item.kind,
    status: item.status,
    ...(isCustomer && { is_minor: item.is_minor === true }),
    created_at: readInteger(item.created_at),
    ...(isCustomer && echoStoredCustomer(item)),
  };
}

/**
 * `GET /participants`: the caller platform's own participant and its customers, oldest first. Filters are
 * answered by direct reads (the e-mail claim, the participant item) and always scoped to the platform, so
 * another platform's participants never appear, whatever is asked.
 */
export async function listParticipants(platformCode: string, filters: ParticipantFilters) {
  let items: Record<string, unknown>[];
  if (filters.email !== undefined) {
    const code = await customerCodeByEmail(platformCode, normaliseEmail(filters.email));
    const matches = code !== undefined && (filters.participant_code === undefined || filters.participant_code === code);
    const participant = matches ? await getParticipantOfPlatform(platformCode, code) : undefined;
    items = participant ? [participant.item] : [];
  } else if (filters.participant_code !== undefined) {
    const participant = await getParticipantOfPlatform(platformCode, filters.participant_code);
    items = participant ? [participant.item] : [];
  } else {
    items = await listParticipantsOfPlatform(platformCode);
  }
  return paginate(items.map(participantView), filters.page, filters.page_size);
}
