import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { NormalizedCustomer, NormalizedMinor } from '../domain/customer-request.js';
import { ACTIVE_STATUS, participantNotActive, type ParticipantStatus } from '../domain/participant-status.js';
import { ConflictError, ServiceUnavailableError, ValidationError } from '../domain/errors.js';
import { pageWithCount, type PageRequest } from './table/paging.js';
import { newParticipantCode } from './codes.js';
import { batchGetItems } from './table/batch-get.js';
import { keepLookup } from './table/kept-lookups.js';
import { eventItem } from './events.js';
import { customerEmailEntity, participantEntity, type Participant } from './entities/participant.js';
import { ALL, readCount } from './table/counters.js';
import { transactWrite } from './table/transactions.js';
import { type TaggedItem } from './table/transaction-items.js';
import type { AppContext } from '../context.js';

export const PARTICIPANTS_LIST = 'participants';

export type ParticipantKind = Participant['kind'];
export type { Participant };

/**
 * A new participant's item, approved and never changed in status, conditioned on its code being free (a
 * taken code is `onCodeTaken`'s error), with its list count: a platform's own participant (`createPlatform`)
 * and a customer (`customerItems`) are written by this one.
 */
export function newParticipantItem(
  ctx: Pick<AppContext, 'tables'>,
  participant: Omit<Participant, 'status' | 'status_version'>,
  onCodeTaken: () => Error,
): TaggedItem {
  return {
    item: participantEntity.put(
      ctx.tables,
      { ...participant, status: 'approved', status_version: 0 },
      { condition: 'attribute_not_exists(pk)' },
    ),
    onConditionFailed: onCodeTaken,
    counts: [{ platformCode: participant.platform_code, list: PARTICIPANTS_LIST, bucket: ALL, delta: 1 }],
  };
}

export async function getParticipant(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  participantCode: string,
): Promise<Participant | undefined> {
  const out = await ctx.db.send(
    new GetCommand(participantEntity.get(ctx.tables, { participant_code: participantCode })),
  );
  return out.Item ? participantEntity.parse(out.Item) : undefined;
}

/**
 * Many participants at once (an award's up to 1,000 recipients), 100 keys per BatchGetItem, unprocessed keys
 * retried under the store's retry policy. Codes that don't exist are simply absent from the result.
 */
export async function getParticipants(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  participantCodes: readonly string[],
): Promise<Map<string, Participant>> {
  const unique = [...new Set(participantCodes)];
  const items = await batchGetItems(
    ctx,
    unique.map((code) => participantEntity.key({ participant_code: code })),
    { what: 'participants read' },
  );
  return new Map(
    items.map((item) => {
      const participant = participantEntity.parse(item);
      return [participant.participant_code, participant];
    }),
  );
}

/** A participant the platform may act for: itself or one of its customers. Anything else is invisible. */
export async function getParticipantOfPlatform(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  platformCode: string,
  participantCode: string,
): Promise<Participant | undefined> {
  const participant = await getParticipant(ctx, participantCode);
  return participant && participant.platform_code === platformCode ? participant : undefined;
}

// ---- status -------------------------------------------------------------------------------------------

/**
 * For a booking's transaction: the participant is still approved when the booking commits. A status change
 * and a booking both touch the participant item, so DynamoDB orders them: a booking either commits before
 * the lock or fails its condition after it (a 400 naming `field`), never slips through a read made earlier.
 * A transaction may name an item once: callers pass each participant once.
 */
export function participantActiveCheck(
  ctx: Pick<AppContext, 'tables'>,
  participantCode: string,
  field: string,
): TaggedItem {
  return {
    item: participantEntity.check(
      ctx.tables,
      { participant_code: participantCode },
      { condition: '#status = :active', names: { '#status': 'status' }, values: { ':active': ACTIVE_STATUS } },
    ),
    onConditionFailed: () => new ValidationError([participantNotActive(field, participantCode)]),
  };
}

/** One check per distinct participant (a transfer between two accounts of one owner checks it once). */
export function participantActiveChecks(
  ctx: Pick<AppContext, 'tables'>,
  participants: readonly { code: string; field: string }[],
): TaggedItem[] {
  const seen = new Set<string>();
  return participants.flatMap(({ code, field }) => {
    if (seen.has(code)) return [];
    seen.add(code);
    return [participantActiveCheck(ctx, code, field)];
  });
}

/** The participant's status as a change conditions on it: read consistently, with its change counter. */
interface ParticipantStatusState {
  participant: Participant;
  /** How many status changes it has had (0 for one never changed): the sequence of its last event. */
  statusVersion: number;
}

export async function getParticipantStatusState(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  participantCode: string,
): Promise<ParticipantStatusState | undefined> {
  const out = await ctx.db.send(
    new GetCommand(participantEntity.get(ctx.tables, { participant_code: participantCode }, { consistent: true })),
  );
  if (!out.Item) return undefined;
  const participant = participantEntity.parse(out.Item);
  return { participant, statusVersion: participant.status_version };
}

/** Another status change committed between the read and this one. */
class ParticipantStatusMovedError extends ConflictError {
  constructor(participantCode: string) {
    super([`status: participant ${participantCode} changed status meanwhile; read it again`]);
    this.name = 'ParticipantStatusMovedError';
  }
}

/**
 * A participant as its status event shows it: who and what status, nothing personal (no names, e-mails,
 * addresses or ID numbers; GET /participants has those for a platform that needs them).
 */
function participantStatusView(participant: Participant, status: ParticipantStatus) {
  return {
    participant_code: participant.participant_code,
    platform_code: participant.platform_code,
    kind: participant.kind,
    status,
  };
}

/**
 * The status update, conditioned on the state read (status and change counter), so of two concurrent changes
 * one fails rather than both recording a transition from the same status. Its `participant.status_changed`
 * event (sequence = the new change counter) and `alongWith` (the audit entry) commit with it.
 */
export async function changeParticipantStatus(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  state: ParticipantStatusState,
  status: ParticipantStatus,
  nowMs: number,
  alongWith: readonly TaggedItem[],
): Promise<void> {
  const { participant, statusVersion } = state;
  const update: TaggedItem = {
    item: participantEntity.update(
      ctx.tables,
      { participant_code: participant.participant_code },
      {
        // It writes `status_version`, all that version 2 adds: a legacy item leaves it upgraded.
        update: 'SET #status = :status, status_version = :next, status_changed_at = :now, item_version = :itemVersion',
        condition:
          statusVersion === 0
            ? // Never changed: a legacy item without the counter, or one written (or migrated) with 0.
              '#status = :previous AND (attribute_not_exists(status_version) OR status_version = :version)'
            : '#status = :previous AND status_version = :version',
        names: { '#status': 'status' },
        values: {
          ':status': status,
          ':previous': participant.status,
          ':next': statusVersion + 1,
          ':now': nowMs,
          ':itemVersion': participantEntity.version,
          ':version': statusVersion,
        },
      },
    ),
    onConditionFailed: () => new ParticipantStatusMovedError(participant.participant_code),
  };
  const event = eventItem(
    ctx,
    {
      type: 'participant.status_changed',
      platformCode: participant.platform_code,
      resource: { type: 'participant', id: participant.participant_code },
      sequence: statusVersion + 1,
      previousStatus: participant.status,
      data: participantStatusView(participant, status),
    },
    nowMs,
  );
  await transactWrite(ctx, [update, event, ...alongWith]);
}

// ---- customers ----------------------------------------------------------------------------------------

/** The answer to a second customer with an e-mail the platform already has (any letter case). */
export const EMAIL_TAKEN = 'email: already used by another customer of this platform';

/** The custodian stopped qualifying between the use case's read and the write (e.g. locked meanwhile). */
const CUSTODIAN_NO_LONGER_ELIGIBLE =
  'custodian_participant_code: the custodian is no longer an approved adult customer of this platform';

/** An adult customer as stored: the tax id only encrypted (`tax_id_encrypted`, see secret-cipher.ts). */
type SealedCustomer = Omit<NormalizedCustomer, 'tax_id'> & { tax_id_encrypted?: string };

interface CreatedCustomer {
  participant_code: string;
  status: 'approved';
  created_at: number;
}

/** Only used to tell "the drawn code is taken" apart inside the create loop; never leaves this module. */
class ParticipantCodeTakenError extends Error {
  override readonly name = 'ParticipantCodeTakenError';
}

const MAX_CODE_ATTEMPTS = 5;

/**
 * A new approved customer's items: the e-mail claim (`attribute_not_exists`: the platform's e-mail is
 * unique) and the participant with its list entry and count. For `createCustomer`'s transaction, and for
 * writing a history in bulk (the benchmark).
 */
export function customerItems(
  ctx: Pick<AppContext, 'tables'>,
  platformCode: string,
  customer: SealedCustomer | NormalizedMinor,
  code: string,
  now: number,
): [TaggedItem, TaggedItem] {
  // A plaintext tax id must never reach the table, whatever a caller passes.
  if ('tax_id' in customer)
    throw new Error('a customer reaches the store with its tax id encrypted (tax_id_encrypted), never in plaintext');
  const custodianCode = 'custodian_participant_code' in customer ? customer.custodian_participant_code : undefined;
  // Metadata is opaque to us and may hold numbers DynamoDB can't store exactly (or at all), so it is kept
  // as the JSON text; everything else is stored as the domain normalised it, never the raw body.
  const { metadata, ...fields } = customer;
  const emailClaim: TaggedItem = {
    item: customerEmailEntity.put(
      ctx.tables,
      {
        platform_code: platformCode,
        email_normalized: customer.email_normalized,
        participant_code: code,
        created_at: now,
      },
      { condition: 'attribute_not_exists(pk)' },
    ),
    onConditionFailed: () => new ConflictError([EMAIL_TAKEN]),
  };
  const participant = newParticipantItem(
    ctx,
    {
      // Customer fields first, so nothing in them can stand in for an attribute the service owns.
      ...fields,
      ...(metadata !== undefined && { metadata_json: JSON.stringify(metadata) }),
      participant_code: code,
      platform_code: platformCode,
      kind: 'customer',
      is_minor: custodianCode !== undefined,
      created_at: now,
    },
    () => new ParticipantCodeTakenError(),
  );
  return [emailClaim, participant];
}

/**
 * Writes a new approved customer (adult or minor) of `platformCode` in one transaction with its e-mail claim
 * and, for a minor, a re-check of the custodian, so neither a concurrent twin nor a custodian changing
 * meanwhile can slip between the use case's checks and the write.
 *
 * Throws `ConflictError([EMAIL_TAKEN])` when the e-mail is already claimed and
 * `ValidationError([CUSTODIAN_NO_LONGER_ELIGIBLE])` when the custodian no longer qualifies.
 */
export async function createCustomer(
  ctx: Pick<AppContext, 'clock' | 'db' | 'tables' | 'logger' | 'retry'>,
  platformCode: string,
  customer: SealedCustomer | NormalizedMinor,
  alongWith: (created: CreatedCustomer) => readonly TaggedItem[] = () => [],
): Promise<CreatedCustomer> {
  // A plaintext tax id must never reach the table, whatever a caller passes (customerItems checks again).
  if ('tax_id' in customer)
    throw new Error('a customer reaches the store with its tax id encrypted (tax_id_encrypted), never in plaintext');
  const custodianCode = 'custodian_participant_code' in customer ? customer.custodian_participant_code : undefined;

  for (let attempt = 1; attempt <= MAX_CODE_ATTEMPTS; attempt++) {
    const code = newParticipantCode();
    const now = ctx.clock.nowMs();
    const [emailClaim, participant] = customerItems(ctx, platformCode, customer, code, now);
    const custodianCheck: TaggedItem[] =
      custodianCode === undefined
        ? []
        : [
            {
              item: participantEntity.check(
                ctx.tables,
                { participant_code: custodianCode },
                {
                  condition:
                    'attribute_exists(pk) AND #platform = :platform AND #kind = :customer AND #status = :approved AND #minor = :false',
                  names: {
                    '#platform': 'platform_code',
                    '#kind': 'kind',
                    '#status': 'status',
                    '#minor': 'is_minor',
                  },
                  values: {
                    ':platform': platformCode,
                    ':customer': 'customer',
                    ':approved': 'approved',
                    ':false': false,
                  },
                },
              ),
              onConditionFailed: () => new ValidationError([CUSTODIAN_NO_LONGER_ELIGIBLE]),
            },
          ];
    try {
      // The e-mail claim goes first: when several conditions fail at once, the duplicate is what the
      // client most needs to hear.
      const created: CreatedCustomer = { participant_code: code, status: 'approved', created_at: now };
      await transactWrite(ctx, [emailClaim, ...custodianCheck, participant, ...alongWith(created)]);
      return created;
    } catch (error) {
      if (error instanceof ParticipantCodeTakenError) continue;
      // Conflict retries ran out (a 503 from transactWrite): many twins are racing for one e-mail. If one
      // of them won, this request is a duplicate like any other; otherwise the 503 stands and a retry will do.
      if (
        error instanceof ServiceUnavailableError &&
        (await customerCodeByEmail(ctx, platformCode, customer.email_normalized))
      ) {
        throw new ConflictError([EMAIL_TAKEN]);
      }
      throw error;
    }
  }
  throw new Error('could not allocate a unique participant code');
}

/** The code of the platform's customer holding `emailNormalized` (lowercased), if any. */
export async function customerCodeByEmail(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  platformCode: string,
  emailNormalized: string,
): Promise<string | undefined> {
  const out = await ctx.db.send(
    new GetCommand(
      customerEmailEntity.get(
        ctx.tables,
        { platform_code: platformCode, email_normalized: emailNormalized },
        { consistent: true },
      ),
    ),
  );
  return out.Item ? customerEmailEntity.parse(out.Item).participant_code : undefined;
}

/**
 * `customerCodeByEmail` for reads: an e-mail claim is never removed or repointed, so the code it names is kept
 * for the context's life and a warm read by e-mail is the participant's one read. An e-mail not claimed is
 * asked again next time (it may be claimed since).
 */
export async function keptCustomerCodeByEmail(
  ctx: Pick<AppContext, 'db' | 'tables' | 'caches'>,
  platformCode: string,
  emailNormalized: string,
): Promise<string | undefined> {
  const cacheKey = `${platformCode}#${emailNormalized}`;
  const kept = ctx.caches.customerCodes.get(cacheKey);
  if (kept !== undefined) return kept;
  const code = await customerCodeByEmail(ctx, platformCode, emailNormalized);
  if (code !== undefined) keepLookup(ctx.caches.customerCodes, cacheKey, code);
  return code;
}

/** One page of a platform's participants (its own participant and its customers), oldest first. */
export async function pageOfParticipants(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'config' | 'caches' | 'retry' | 'cursorKey'>,
  platformCode: string,
  request: PageRequest,
) {
  const index = participantEntity.listIndex('gsi1', { platform_code: platformCode }, { descending: false });
  const page = await pageWithCount(ctx, index, request, { list: PARTICIPANTS_LIST, platformCode, filters: {} }, () =>
    readCount(ctx, platformCode, PARTICIPANTS_LIST),
  );
  return { ...page, items: page.items.map((item) => participantEntity.parse(item)) };
}
