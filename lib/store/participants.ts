import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { NormalizedCustomer, NormalizedMinor } from '../domain/customers.js';
import { ACTIVE_STATUS, participantNotActive, type ParticipantStatus } from '../domain/participant-status.js';
import { ConflictError, ServiceUnavailableError, ValidationError } from '../domain/errors.js';
import { pageWithCount, type ListIndex, type PageRequest } from './table/paging.js';
import { newParticipantCode } from './codes.js';
import { batchGetItems } from './table/batch-get.js';
import { eventItem } from './events.js';
import { keys } from './keys.js';
import { readInteger } from './table/integers.js';
import { ALL, readCount } from './table/counters.js';
import { transactWrite } from './table/transactions.js';
import { type TaggedItem } from './table/transaction-items.js';
import type { AppContext } from '../context.js';

export const PARTICIPANTS_LIST = 'participants';

export type ParticipantKind = 'platform' | 'customer';

/**
 * The participant item's schema version (lib/store/README.md, "Item versions"). 2: it carries
 * `status_version` (its status changes, 0 for none), written 0 at creation. 1 (no `item_version`): written
 * before, without `status_version` until its first status change.
 */
export const PARTICIPANT_ITEM_VERSION = 2;

/**
 * Its status changes so far: version 2 always carries them; version 1 (no `item_version`) lacks them until its
 * first change. Not through table/item-versions.ts: the customer functions' bundles would load it at import.
 */
function statusVersionOf(item: Record<string, any>): number {
  if (item.status_version !== undefined) return readInteger(item.status_version);
  if (item.item_version === undefined) return 0;
  throw new Error(`no status_version in ${item.pk} at item_version ${item.item_version}`);
}

export interface Participant {
  participant_code: string;
  platform_code: string;
  kind: ParticipantKind;
  status: string;
  /** Customers only: true for a minor (a minor can never be a custodian). */
  is_minor?: boolean;
  item: Record<string, unknown>;
}

function toParticipant(item: Record<string, any>): Participant {
  return {
    participant_code: item.participant_code,
    platform_code: item.platform_code,
    kind: item.kind,
    status: item.status,
    is_minor: item.is_minor,
    item,
  };
}

export async function getParticipant(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  participantCode: string,
): Promise<Participant | undefined> {
  const out = await ctx.db.send(new GetCommand({ TableName: ctx.tables.main, Key: keys.participant(participantCode) }));
  return out.Item ? toParticipant(out.Item) : undefined;
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
    unique.map((code) => keys.participant(code)),
    { what: 'participants read' },
  );
  return new Map(items.map((item) => [item.participant_code as string, toParticipant(item)]));
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
    item: {
      ConditionCheck: {
        TableName: ctx.tables.main,
        Key: keys.participant(participantCode),
        ConditionExpression: '#status = :active',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':active': ACTIVE_STATUS },
      },
    },
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
    new GetCommand({ TableName: ctx.tables.main, Key: keys.participant(participantCode), ConsistentRead: true }),
  );
  if (!out.Item) return undefined;
  return {
    participant: toParticipant(out.Item),
    statusVersion: statusVersionOf(out.Item),
  };
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
    item: {
      Update: {
        TableName: ctx.tables.main,
        Key: keys.participant(participant.participant_code),
        // It writes `status_version`, all that version 2 adds: a legacy item leaves it upgraded.
        UpdateExpression:
          'SET #status = :status, status_version = :next, status_changed_at = :now, item_version = :itemVersion',
        ConditionExpression:
          statusVersion === 0
            ? // Never changed: a legacy item without the counter, or one written (or migrated) with 0.
              '#status = :previous AND (attribute_not_exists(status_version) OR status_version = :version)'
            : '#status = :previous AND status_version = :version',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':status': status,
          ':previous': participant.status,
          ':next': statusVersion + 1,
          ':now': nowMs,
          ':itemVersion': PARTICIPANT_ITEM_VERSION,
          ':version': statusVersion,
        },
      },
    },
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
  const { main } = ctx.tables;
  const custodianCode = 'custodian_participant_code' in customer ? customer.custodian_participant_code : undefined;
  // Metadata is opaque to us and may hold numbers DynamoDB can't store exactly (or at all), so it is kept
  // as the JSON text; everything else is stored as the domain normalised it, never the raw body.
  const { metadata, ...fields } = customer;
  const emailClaim: TaggedItem = {
    item: {
      Put: {
        TableName: main,
        Item: {
          ...keys.customerEmail(platformCode, customer.email_normalized),
          type: 'customer_email',
          platform_code: platformCode,
          email_normalized: customer.email_normalized,
          participant_code: code,
          created_at: now,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    onConditionFailed: () => new ConflictError([EMAIL_TAKEN]),
  };
  const participant: TaggedItem = {
    item: {
      Put: {
        TableName: main,
        Item: {
          // Customer fields first, so nothing in them can stand in for an attribute the service owns.
          ...fields,
          ...(metadata !== undefined && { metadata_json: JSON.stringify(metadata) }),
          ...keys.participant(code),
          gsi1pk: keys.participantsOfPlatform(platformCode),
          gsi1sk: keys.participantSortKey(now, code),
          type: 'participant',
          participant_code: code,
          platform_code: platformCode,
          kind: 'customer',
          status: 'approved',
          is_minor: custodianCode !== undefined,
          created_at: now,
          status_version: 0,
          item_version: PARTICIPANT_ITEM_VERSION,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    onConditionFailed: () => new ParticipantCodeTakenError(),
    counts: [{ platformCode, list: PARTICIPANTS_LIST, bucket: ALL, delta: 1 }],
  };
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
  const { main } = ctx.tables;
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
              item: {
                ConditionCheck: {
                  TableName: main,
                  Key: keys.participant(custodianCode),
                  ConditionExpression:
                    'attribute_exists(pk) AND #platform = :platform AND #kind = :customer AND #status = :approved AND #minor = :false',
                  ExpressionAttributeNames: {
                    '#platform': 'platform_code',
                    '#kind': 'kind',
                    '#status': 'status',
                    '#minor': 'is_minor',
                  },
                  ExpressionAttributeValues: {
                    ':platform': platformCode,
                    ':customer': 'customer',
                    ':approved': 'approved',
                    ':false': false,
                  },
                },
              },
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
    new GetCommand({
      TableName: ctx.tables.main,
      Key: keys.customerEmail(platformCode, emailNormalized),
      ConsistentRead: true,
    }),
  );
  return out.Item?.participant_code as string | undefined;
}

/** One page of a platform's participants (its own participant and its customers), oldest first, as stored. */
export async function pageOfParticipants(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'config' | 'caches' | 'retry' | 'cursorKey'>,
  platformCode: string,
  request: PageRequest,
) {
  const index: ListIndex = {
    indexName: 'gsi1',
    partition: { attribute: 'gsi1pk', value: keys.participantsOfPlatform(platformCode) },
    sortAttribute: 'gsi1sk',
    descending: false,
  };
  return pageWithCount(ctx, index, request, { list: PARTICIPANTS_LIST, platformCode, filters: {} }, () =>
    readCount(ctx, platformCode, PARTICIPANTS_LIST),
  );
}
