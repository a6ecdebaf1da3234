import { type Asset, findAsset } from '../domain/assets.js';
import { ConflictError, ValidationError } from '../domain/errors.js';
import {
  accountGroupProblem,
  DEFAULT_ACCOUNT_LABEL,
  moveLegs,
  sameAccount,
  type AccountRef,
} from '../domain/ledger.js';
import { formatAmount, type Money, parseAmount } from '../domain/money.js';
import { ACTIVE_STATUS, participantNotActive } from '../domain/participant-status.js';
import { newId, newNumericId } from '../store/codes.js';
import { getParticipants, participantActiveChecks } from '../store/participants.js';
import { hasRelationship, relationshipCheck } from '../store/relationships.js';
import { keepLookup } from '../store/table/kept-lookups.js';
import { book } from '../ledger/engine.js';
import { type Booking, newBookingId } from '../ledger/booking.js';
import type { TaggedItem } from '../store/table/transaction-items.js';
import { transferRecordItem, TransferIdTakenError, transferViewItem, type Transfer } from '../store/transfers.js';
import { accountLabelProblem } from '../domain/validation.js';
import { clientIdClaim, NO_REQUEST_CLAIM, type RequestClaim } from '../store/windows.js';
import { publicTransfer } from './list-transfers.js';
import type { AppContext } from '../context.js';

interface TransferRequest {
  client_transfer_id?: string;
  from_participant_code: string;
  from_account_group?: string;
  from_account_label?: string;
  to_participant_code: string;
  to_account_group?: string;
  to_account_label?: string;
  asset: string;
  amount: string;
}

/**
 * A participant as a transfer needs it: its platform (which never changes) and its status, as read now, or
 * taken as active for a participant whose platform this context kept (the booking checks it is, `partyChecks`).
 */
interface Party {
  platform_code: string;
  status: string;
  /** Acting under a grant (`submits_platform_transfers_for`): the booking checks the grant still stands. */
  granted?: true;
  /**
   * Taken from what this context kept, not read for this request: a failed check of its status is explained by
   * reading it (a check of a participant read now failing says what it said before: locked since the read).
   */
  kept?: true;
}

/**
 * A check on a participant or a grant failed in the booking's transaction: the parties are then read to say
 * which, in the words a read before the booking gives (each refusal as it was when they were read first).
 */
class PartyCheckFailedError extends ValidationError {
  constructor(errors: string[]) {
    super(errors);
    this.name = 'PartyCheckFailedError';
  }
}

/**
 * The parties named, by code: `kept` takes a participant whose platform this context kept as active (its
 * booking checks it is), and reads only the others; `read` reads both (to explain a refused check). Both sides
 * in one BatchGetItem: one round trip (and one connection on a cold Lambda) instead of two.
 */
async function partiesOf(ctx: AppContext, codes: readonly string[], how: 'kept' | 'read'): Promise<Map<string, Party>> {
  const kept = ctx.caches.participantPlatforms;
  const parties = new Map<string, Party>();
  if (how === 'kept')
    for (const code of codes) {
      const platform = kept.get(code);
      if (platform !== undefined) parties.set(code, { platform_code: platform, status: ACTIVE_STATUS, kept: true });
    }
  const unread = codes.filter((code) => !parties.has(code));
  if (unread.length === 0) return parties;
  for (const [code, participant] of await getParticipants(ctx, unread)) {
    keepLookup(kept, code, participant.platform_code);
    parties.set(code, { platform_code: participant.platform_code, status: participant.status });
  }
  return parties;
}

/**
 * A platform may move money between accounts of participants it stands for: itself and its customers, and
 * any participant it holds `submits_platform_transfers_for` for. Anyone else reads as unknown, so the
 * answer never reveals whether another platform's participant exists. `kept`: the grant is taken as held and
 * checked by the booking; `read`: it is read (to explain a refused check).
 */
async function permittedParticipant(
  ctx: AppContext,
  platformCode: string,
  code: string,
  party: Party | undefined,
  how: 'kept' | 'read',
): Promise<Party | undefined> {
  if (!party) return undefined;
  if (party.platform_code === platformCode) return party;
  if (how === 'kept') return { ...party, granted: true };
  return (await hasRelationship(ctx, platformCode, 'submits_platform_transfers_for', code))
    ? { ...party, granted: true }
    : undefined;
}

function resolveSide(
  side: 'from' | 'to',
  participant: Party | undefined,
  code: string,
  group: string | undefined,
  label: string | undefined,
  asset: string,
  errors: string[],
) {
  const groupProblem = group === undefined ? undefined : accountGroupProblem(`${side}_account_group`, group);
  if (groupProblem) errors.push(groupProblem);
  // The route's schema holds labels to this already; the rule is the ledger's, so the use case keeps it too.
  const labelProblem = label === undefined ? undefined : accountLabelProblem(`${side}_account_label`, label);
  if (labelProblem) errors.push(labelProblem);
  if (!participant) {
    errors.push(`${side}_participant_code: no participant '${code}' that this platform may transfer for`);
    return undefined;
  }
  if (participant.status !== ACTIVE_STATUS) {
    errors.push(participantNotActive(`${side}_participant_code`, code, participant.status));
    return undefined;
  }
  if (groupProblem || labelProblem) return undefined;
  // A participant's accounts default to the group named by its platform's code; a platform may name its own
  // groups for the participants it acts for, as the reference API's clients do.
  const account: AccountRef = {
    participant_code: code,
    account_group: group ?? participant.platform_code,
    account_label: label ?? DEFAULT_ACCOUNT_LABEL,
    asset,
  };
  return {
    account,
    platform_code: participant.platform_code,
    granted: participant.granted === true,
    kept: participant.kept === true,
  };
}

type TransferSide = NonNullable<ReturnType<typeof resolveSide>>;

/** A request that passed validation: its asset, its amount and both resolved accounts. */
interface ValidTransfer {
  asset: Asset;
  amount: Money;
  from: TransferSide;
  to: TransferSide;
}

/** Validates the request and resolves both parties, reporting every problem at once (`how`: see `partiesOf`). */
async function validTransfer(
  ctx: AppContext,
  platformCode: string,
  request: TransferRequest,
  how: 'kept' | 'read',
): Promise<ValidTransfer> {
  const errors: string[] = [];
  const asset = findAsset(request.asset);
  if (!asset) errors.push(`asset: unknown asset '${request.asset}'`);
  const amount = asset ? parseAmount(request.amount, asset, 'amount') : undefined;
  if (typeof amount === 'string') errors.push(amount);

  const codes = [request.from_participant_code, request.to_participant_code];
  const parties = await partiesOf(ctx, codes, how);
  const [fromParticipant, toParticipant] = await Promise.all(
    codes.map((code) => permittedParticipant(ctx, platformCode, code, parties.get(code), how)),
  );
  const symbol = asset?.symbol ?? request.asset;
  const from = resolveSide(
    'from',
    fromParticipant,
    request.from_participant_code,
    request.from_account_group,
    request.from_account_label,
    symbol,
    errors,
  );
  const to = resolveSide(
    'to',
    toParticipant,
    request.to_participant_code,
    request.to_account_group,
    request.to_account_label,
    symbol,
    errors,
  );
  if (from && to && sameAccount(from.account, to.account))
    errors.push('to_account_label: source and destination are the same account');
  if (errors.length || !asset || !from || !to || amount === undefined || typeof amount === 'string')
    throw new ValidationError(errors);
  return { asset, amount, from, to };
}

/** The `approved` transfer record, under a freshly drawn numeric id. */
function transferRecord(
  platformCode: string,
  request: TransferRequest,
  { asset, amount, from, to }: ValidTransfer,
  movementId: string,
  nowMs: number,
): Transfer {
  const iso = new Date(nowMs).toISOString();
  return {
    id: newNumericId(nowMs),
    platform_code: platformCode,
    created_at: iso,
    updated_at: iso,
    status: 'approved',
    from_participant_code: from.account.participant_code,
    from_account_group: from.account.account_group,
    from_account_label: from.account.account_label,
    to_participant_code: to.account.participant_code,
    to_account_group: to.account.account_group,
    to_account_label: to.account.account_label,
    asset: asset.symbol,
    amount: formatAmount(amount, asset),
    movement_id: movementId,
    client_transfer_id: request.client_transfer_id ?? null,
    admin_transfer: false,
    prefunded: false,
  };
}

/** The 72-hour claim on `client_transfer_id`, when the client gave one. */
function clientTransferIdClaims(
  ctx: AppContext,
  platformCode: string,
  request: TransferRequest,
  transfer: Transfer,
  nowMs: number,
): TaggedItem[] {
  return request.client_transfer_id
    ? [
        {
          item: clientIdClaim(ctx, 'transfer', platformCode, request.client_transfer_id, nowMs, String(transfer.id)),
          onConditionFailed: () =>
            new ConflictError(['client_transfer_id: already used by this platform in the last 72 hours']),
        },
      ]
    : [];
}

/**
 * The booking's checks of the parties: each owner still active (once per participant), and each grant the
 * platform acts under still held. A failed check of what was not read for this request (a kept participant, a
 * grant) is explained by reading the parties (`PartyCheckFailedError`).
 */
function partyChecks(ctx: AppContext, platform: string, from: TransferSide, to: TransferSide): TaggedItem[] {
  const active = participantActiveChecks(ctx, [
    { code: from.account.participant_code, field: 'from_participant_code' },
    { code: to.account.participant_code, field: 'to_participant_code' },
  ]).map((check, index): TaggedItem => {
    // One check per participant, the source's first: a participant this context kept (not read for this
    // request) is read to say why its check failed; one read now says what it did before (locked since).
    if (!(index === 0 ? from : to).kept) return check;
    return {
      ...check,
      onConditionFailed: () => {
        const refusal = check.onConditionFailed?.();
        return new PartyCheckFailedError(refusal instanceof ValidationError ? refusal.errors : []);
      },
    };
  });
  const grants = [
    { side: 'from', party: from },
    { side: 'to', party: to },
  ].flatMap(({ side, party }): TaggedItem[] => {
    const code = party.account.participant_code;
    if (!party.granted || (side === 'to' && code === from.account.participant_code && from.granted)) return [];
    return [
      {
        item: relationshipCheck(ctx, platform, 'submits_platform_transfers_for', code),
        onConditionFailed: () =>
          new PartyCheckFailedError([
            `${side}_participant_code: no participant '${code}' that this platform may transfer for`,
          ]),
      },
    ];
  });
  return [...active, ...grants];
}

/** The transfer's booking: the movement from source to destination, the claims, both owners' checks, the record. */
function transferBooking(
  ctx: AppContext,
  { amount, from, to }: ValidTransfer,
  transfer: Transfer,
  requestClaims: () => TaggedItem[],
  clientIdClaims: readonly TaggedItem[],
  nowMs: number,
): Booking {
  return {
    id: newBookingId(nowMs),
    atMs: nowMs,
    movement: {
      movement_id: transfer.movement_id,
      type: 'transfer',
      reference: `transfer:${transfer.id}`,
      legs: moveLegs(from, to, amount),
    },
    items: [
      // Claims go first: when a duplicate also lacks funds, the client hears about the duplicate. The
      // request's claim stores this answer with the booking (a retry after a crash gets it, see `RequestClaim`).
      ...requestClaims(),
      ...clientIdClaims,
      // Both owners still approved, and a grant acted under still held, when the transfer commits (a lock or a
      // revocation committed meanwhile refuses it).
      ...partyChecks(ctx, transfer.platform_code, from, to),
      transferRecordItem(ctx, transfer, nowMs),
      // A transfer out of another platform's participant (under a grant) is listed for that platform too.
      ...(from.platform_code && from.platform_code !== transfer.platform_code
        ? [transferViewItem(ctx, transfer, nowMs, from.platform_code)]
        : []),
    ],
  };
}

const MAX_ID_DRAWS = 5;

/**
 * Books a transfer: the transfer record, the movement (with the source's `balance >= amount` condition)
 * and the 72-hour `client_transfer_id` claim, in one transaction. Status is `approved` at once.
 */
export async function createTransfer(
  ctx: AppContext,
  platformCode: string,
  request: TransferRequest,
  claim: RequestClaim = NO_REQUEST_CLAIM,
) {
  let valid = await validTransfer(ctx, platformCode, request, 'kept');
  let partiesRead = false;
  // A numeric id drawn twice in one millisecond fails the record's condition; it is drawn again, a few times.
  for (let draw = 1; ; draw++) {
    const nowMs = ctx.clock.nowMs();
    const transfer = transferRecord(platformCode, request, valid, newId(), nowMs);
    const clientIdClaims = clientTransferIdClaims(ctx, platformCode, request, transfer, nowMs);
    const answer = publicTransfer(transfer);
    try {
      await book(
        ctx,
        transferBooking(ctx, valid, transfer, () => claim(answer), clientIdClaims, nowMs),
      );
      return answer;
    } catch (error) {
      if (error instanceof TransferIdTakenError && draw < MAX_ID_DRAWS) continue;
      if (error instanceof PartyCheckFailedError && !partiesRead) {
        // A participant's status or a grant changed since this context took it as it was: read the parties, which
        // refuses in today's words (or, should they pass now, books on what was read).
        partiesRead = true;
        valid = await validTransfer(ctx, platformCode, request, 'read');
        continue;
      }
      throw error;
    }
  }
}
