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
import { getParticipants, participantActiveChecks, type Participant } from '../store/participants.js';
import { hasRelationship } from '../store/relationships.js';
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
 * A platform may move money between accounts of participants it stands for: itself and its customers, and
 * any participant it holds `submits_platform_transfers_for` for. Anyone else reads as unknown, so the
 * answer never reveals whether another platform's participant exists.
 */
async function permittedParticipant(
  ctx: AppContext,
  platformCode: string,
  participant: Participant | undefined,
): Promise<Participant | undefined> {
  if (!participant) return undefined;
  if (participant.platform_code === platformCode) return participant;
  return (await hasRelationship(ctx, platformCode, 'submits_platform_transfers_for', participant.participant_code))
    ? participant
    : undefined;
}

function resolveSide(
  side: 'from' | 'to',
  participant: Participant | undefined,
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
  return { account, platform_code: participant.platform_code };
}

type TransferSide = NonNullable<ReturnType<typeof resolveSide>>;

/** A request that passed validation: its asset, its amount and both resolved accounts. */
interface ValidTransfer {
  asset: Asset;
  amount: Money;
  from: TransferSide;
  to: TransferSide;
}

/** Validates the request and resolves both parties, reporting every problem at once. */
async function validTransfer(ctx: AppContext, platformCode: string, request: TransferRequest): Promise<ValidTransfer> {
  const errors: string[] = [];
  const asset = findAsset(request.asset);
  if (!asset) errors.push(`asset: unknown asset '${request.asset}'`);
  const amount = asset ? parseAmount(request.amount, asset, 'amount') : undefined;
  if (typeof amount === 'string') errors.push(amount);

  // Both sides in one BatchGetItem: one round trip (and one connection on a cold Lambda) instead of two.
  const participants = await getParticipants(ctx, [request.from_participant_code, request.to_participant_code]);
  const [fromParticipant, toParticipant] = await Promise.all([
    permittedParticipant(ctx, platformCode, participants.get(request.from_participant_code)),
    permittedParticipant(ctx, platformCode, participants.get(request.to_participant_code)),
  ]);
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
      // Both owners still approved when the transfer commits (a lock committed meanwhile refuses it).
      ...participantActiveChecks(ctx, [
        { code: from.account.participant_code, field: 'from_participant_code' },
        { code: to.account.participant_code, field: 'to_participant_code' },
      ]),
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
  const valid = await validTransfer(ctx, platformCode, request);
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
      throw error;
    }
  }
}
