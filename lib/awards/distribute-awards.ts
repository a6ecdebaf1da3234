import { NO_REQUEST_CLAIM, type RequestClaim } from '../store/windows.js';
import { findAsset, type Asset } from '../domain/assets.js';
import {
  chunked,
  distributionFingerprint,
  distributionTotal,
  laneOf,
  recipientListProblems,
  recipientsPerChunk,
} from '../domain/awards.js';
import {
  IdempotencyMismatchError,
  InsufficientFundsError,
  NotFoundError,
  ServiceUnavailableError,
  ValidationError,
} from '../domain/errors.js';
import {
  accountIdOf,
  DEFAULT_ACCOUNT_LABEL,
  moveLegs,
  SYSTEM_PARTICIPANTS,
  type AccountRef,
  type Movement,
} from '../domain/ledger.js';
import { formatAmount, Money, parseAmount } from '../domain/money.js';
import type { TradeReport, TradeReportParty } from '../domain/trade-report.js';
import type { AuthContext } from '../domain/caller.js';
import {
  ChunkAlreadyCreditedError,
  chunkCreditedItem,
  chunkPartCreditedItem,
  completeDistribution,
  distributionCreationItems,
  DistributionExistsError,
  getDistribution,
  getDistributionChunk,
  type Distribution,
  type DistributionChunk,
  type Recipient,
  type StoredDistribution,
} from '../store/awards.js';
import { recordTradesAccepted } from '../observability/metrics.js';
import { newId } from '../store/codes.js';
import { balanceOf } from '../store/ledger.js';
import { bookMovement } from '../ledger/engine.js';
import { getParticipants, participantActiveChecks } from '../store/participants.js';
import { tradeItems } from '../store/trades.js';
import { settledTrade } from '../domain/trade.js';
import { MAX_TRANSACTION_ITEMS } from '../store/table/transaction-items.js';
import type { AppContext } from '../context.js';

/** The label of a platform's award pool: what `POST /awards/fund` buys into and distributions pay from. */
export const AWARDS_ACCOUNT_LABEL = 'awards';

/**
 * When a distribution names no quoted currency (the spec's body has none; the reference API's does), its
 * trades are recorded against this one. Nothing is paid in it: see `awardTrade`.
 */
const DEFAULT_AWARD_QUOTED_CURRENCY = 'USD';

const RECIPIENTS_PER_CHUNK = recipientsPerChunk(MAX_TRANSACTION_ITEMS);

/** An account on one side of a movement leg, with the platform it is listed under (none for system accounts). */
type Holder = { account: AccountRef; platform_code: string | null };

interface DistributeRequest {
  asset: string;
  quantity: string;
  participant_codes: string[];
  quoted_currency?: string;
}

interface DistributionResult {
  request_id: string;
  /** One per recipient; `trade_ids_list` is the reference API's list of the confirm's trades, first = `trade_id`. */
  confirms: (Recipient & { trade_ids_list: string[] })[];
}

function awardsPoolAccount(auth: Pick<AuthContext, 'platformCode' | 'participantCode'>, asset: string): Holder {
  return {
    account: {
      participant_code: auth.participantCode,
      account_group: auth.platformCode,
      account_label: AWARDS_ACCOUNT_LABEL,
      asset,
    },
    platform_code: auth.platformCode,
  };
}

/**
 * Per platform, asset and lane (`ESCROW_LANES`), so one platform's distributions in flight never mix with
 * another's and concurrent chunks never share an item. Lane 0 is the account distributions used before lanes.
 */
export function awardsEscrowAccount(platformCode: string, asset: string, lane: number): Holder {
  const label = lane === 0 ? AWARDS_ACCOUNT_LABEL : `${AWARDS_ACCOUNT_LABEL}-${lane}`;
  return {
    account: { participant_code: SYSTEM_PARTICIPANTS.escrow, account_group: platformCode, account_label: label, asset },
    platform_code: null,
  };
}

function recipientAccount(platformCode: string, participantCode: string, asset: string): Holder {
  return {
    account: {
      participant_code: participantCode,
      account_group: platformCode,
      account_label: DEFAULT_ACCOUNT_LABEL,
      asset,
    },
    platform_code: platformCode,
  };
}

// ---- validation -----------------------------------------------------------------------------------------

interface ValidRequest {
  asset: Asset;
  quoted: Asset;
  quantity: Money;
  codes: string[];
  fingerprint: string;
}

/** Every problem that needs no lookup, at once. */
function validateRequest(request: DistributeRequest): ValidRequest {
  const errors: string[] = [];
  const asset = findAsset(request.asset);
  if (!asset) errors.push(`asset: unknown asset '${request.asset}'`);
  else if (asset.type !== 'crypto') errors.push(`asset: ${asset.symbol} is not a crypto asset`);
  let quantity: Money | undefined;
  if (asset) {
    const parsed = parseAmount(request.quantity, asset, 'quantity');
    if (typeof parsed === 'string') errors.push(parsed);
    else quantity = parsed;
  }
  const quotedSymbol = request.quoted_currency ?? DEFAULT_AWARD_QUOTED_CURRENCY;
  const quoted = findAsset(quotedSymbol);
  if (!quoted) errors.push(`quoted_currency: unknown asset '${quotedSymbol}'`);
  else if (quoted.type !== 'fiat') errors.push(`quoted_currency: ${quoted.symbol} is not a fiat currency`);
  errors.push(...recipientListProblems(request.participant_codes));
  if (errors.length > 0 || !asset || !quoted || !quantity) throw new ValidationError(errors);
  const codes = request.participant_codes;
  return {
    asset,
    quoted,
    quantity,
    codes,
    fingerprint: distributionFingerprint({
      asset: asset.symbol,
      quantity,
      quotedCurrency: quoted.symbol,
      participantCodes: codes,
    }),
  };
}

/** Each code must be an approved customer of the caller's platform; every offender is named. */
async function recipientProblems(ctx: AppContext, platformCode: string, codes: readonly string[]): Promise<string[]> {
  const participants = await getParticipants(ctx, codes);
  const unknown: string[] = [];
  const notApproved: string[] = [];
  for (const code of codes) {
    const participant = participants.get(code);
    // The platform's own participant and other platforms' customers read like unknown codes.
    if (!participant || participant.platform_code !== platformCode || participant.kind !== 'customer')
      unknown.push(code);
    else if (participant.status !== 'approved') notApproved.push(code);
  }
  const errors: string[] = [];
  if (unknown.length > 0) errors.push(`participant_codes: not customers of this platform: ${unknown.join(', ')}`);
  if (notApproved.length > 0) errors.push(`participant_codes: customers not approved: ${notApproved.join(', ')}`);
  return errors;
}

// ---- the use case ---------------------------------------------------------------------------------------

/**
 * A new distribution's checks that need reads, before anything moves: the recipients, then the pool against
 * quantity × N. The pool's balance is read only to answer a shortfall clearly; the escrow booking's own
 * condition is what keeps the pool from going negative.
 */
async function checkedPool(
  ctx: AppContext,
  auth: AuthContext,
  valid: ValidRequest,
): Promise<{ pool: Holder; total: Money }> {
  const problems = await recipientProblems(ctx, auth.platformCode, valid.codes);
  if (problems.length > 0) throw new ValidationError(problems);

  const pool = awardsPoolAccount(auth, valid.asset.symbol);
  const total = distributionTotal(valid.quantity, valid.codes.length);
  const held = await balanceOf(ctx, pool.account);
  if (held.lt(total)) {
    throw new ValidationError([
      `quantity: the awards pool holds ${formatAmount(held, valid.asset)} ${valid.asset.symbol}, less than the ` +
        `${formatAmount(total, valid.asset)} needed for ${valid.codes.length} × ${formatAmount(valid.quantity, valid.asset)}`,
    ]);
  }
  return { pool, total };
}

/** The distribution's record and its pending chunks, each recipient with its trade id drawn now. */
function plannedDistribution(
  auth: AuthContext,
  requestId: string,
  valid: ValidRequest,
  { pool, total }: { pool: Holder; total: Money },
  nowMs: number,
): { distribution: Distribution; chunks: DistributionChunk[] } {
  const escrowOf = (lane: number) => awardsEscrowAccount(auth.platformCode, valid.asset.symbol, lane);
  const recipients = valid.codes.map((code): Recipient => ({ participant_code: code, trade_id: newId() }));
  const chunks = chunked(recipients, RECIPIENTS_PER_CHUNK).map(
    (members, index): DistributionChunk => ({
      index,
      recipients: members,
      movement_id: newId(),
      escrow: escrowOf(laneOf(index)).account,
      status: 'pending',
      credited_at: null,
    }),
  );
  const distribution: Distribution = {
    platform_code: auth.platformCode,
    distribution_id: requestId,
    asset: valid.asset.symbol,
    quantity: formatAmount(valid.quantity, valid.asset),
    quoted_currency: valid.quoted.symbol,
    recipient_count: recipients.length,
    total: formatAmount(total, valid.asset),
    fingerprint: valid.fingerprint,
    pool: pool.account,
    escrow: escrowOf(0).account,
    chunk_count: chunks.length,
    status: 'distributing',
    created_at: nowMs,
    completed_at: null,
  };
  return { distribution, chunks };
}

/** The pool debited into the escrow lanes: each lane receives what its chunks pay out, together the total. */
function escrowMovement(
  auth: AuthContext,
  requestId: string,
  valid: ValidRequest,
  pool: Holder,
  chunks: readonly DistributionChunk[],
): Movement {
  const laneRecipients = new Map<number, number>();
  for (const chunk of chunks) {
    const lane = laneOf(chunk.index);
    laneRecipients.set(lane, (laneRecipients.get(lane) ?? 0) + chunk.recipients.length);
  }
  return {
    movement_id: newId(),
    type: 'award_escrow',
    reference: `award_distribution:${auth.platformCode}:${requestId}`,
    legs: [...laneRecipients].flatMap(([lane, count]) =>
      moveLegs(pool, awardsEscrowAccount(auth.platformCode, valid.asset.symbol, lane), valid.quantity.mul(count)),
    ),
  };
}

/**
 * `POST /awards/distribute`: gives each listed customer `quantity` of `asset` from the platform's award pool.
 *
 * The distribution is keyed by the request (`requestId`: the client's X-Request-Id, else a new id). A new one
 * is checked completely (recipients, then the pool against quantity × N) before anything moves, then recorded
 * with the pool debited into escrow in one transaction, then credited chunk by chunk. When the same request
 * comes again (a retry after a crash, which the idempotency middleware lets through because the failed run
 * released its id), the stored distribution is resumed: credited chunks are skipped, the rest credited.
 */
export async function distributeAwards(
  ctx: AppContext,
  auth: AuthContext,
  request: DistributeRequest,
  requestId: string,
  claim: RequestClaim = NO_REQUEST_CLAIM,
): Promise<DistributionResult> {
  const valid = validateRequest(request);
  const existing = await getDistribution(ctx, auth.platformCode, requestId);
  if (existing) return resume(ctx, existing, valid.fingerprint, claim);

  const funded = await checkedPool(ctx, auth, valid);
  const nowMs = ctx.clock.nowMs();
  const { distribution, chunks } = plannedDistribution(auth, requestId, valid, funded, nowMs);
  const movement = escrowMovement(auth, requestId, valid, funded.pool, chunks);
  try {
    // The distribution's own record goes first: losing to an identical concurrent request is what matters
    // then, not the pool (which that request has just debited).
    await bookMovement(ctx, movement, distributionCreationItems(ctx, distribution, chunks), nowMs);
  } catch (error) {
    // Losing to an identical run shows as its record existing, or as conflict retries running out (503). A
    // booking still queued behind the hot pool account (503 too) may have committed since: then the
    // distribution found is this request's own, and resuming it finishes it.
    if (!(error instanceof DistributionExistsError) && !(error instanceof ServiceUnavailableError)) throw error;
    const winner = await getDistribution(ctx, auth.platformCode, requestId);
    if (!winner) throw error;
    return resume(ctx, winner, valid.fingerprint, claim);
  }
  return finish(ctx, { distribution, chunks }, claim);
}

function resume(
  ctx: AppContext,
  stored: StoredDistribution,
  fingerprint: string,
  claim: RequestClaim,
): Promise<DistributionResult> {
  // The idempotency middleware already refuses a different body under a live id; this catches what it can't
  // see (an id reused after its 72 hours): another request must not complete someone else's distribution.
  if (stored.distribution.fingerprint !== fingerprint) throw new IdempotencyMismatchError();
  return finish(ctx, stored, claim);
}

/** Ops: finishes a recorded distribution as it was asked for (see `awards resume`). */
export async function resumeDistribution(
  ctx: AppContext,
  platformCode: string,
  distributionId: string,
): Promise<DistributionResult> {
  const stored = await getDistribution(ctx, platformCode, distributionId);
  if (!stored) throw new NotFoundError(`award distribution not found: ${platformCode}/${distributionId}`);
  return finish(ctx, stored);
}

/**
 * Credits every chunk still pending, then marks the distribution completed. The chunks of one escrow lane are
 * credited in order, the lanes at the same time. Safe to run any number of times, concurrently too: each
 * chunk's transaction is conditioned on the chunk being pending, and its trade ids, movement id and lane were
 * fixed when the distribution was recorded. When a chunk fails (a recipient locked meanwhile), its lane stops
 * there, the other lanes finish, and the first failure is what the caller gets; the same request resumes.
 */
async function finish(
  ctx: AppContext,
  stored: StoredDistribution,
  claim: RequestClaim = NO_REQUEST_CLAIM,
): Promise<DistributionResult> {
  const { distribution, chunks } = stored;
  // A recipient's position (its trade's client id) counts the recipients of the chunks before it, as stored:
  // chunk sizes are fixed when the distribution is recorded, whatever the current size rule.
  const lanes = new Map<string, { chunk: DistributionChunk; position: number }[]>();
  let firstPosition = 0;
  for (const chunk of chunks) {
    const position = firstPosition;
    firstPosition += chunk.recipients.length;
    if (chunk.status === 'credited') continue;
    const lane = accountIdOf(chunk.escrow);
    if (!lanes.has(lane)) lanes.set(lane, []);
    lanes.get(lane)!.push({ chunk, position });
  }
  const outcomes = await Promise.allSettled(
    [...lanes.values()].map(async (lane) => {
      for (const { chunk, position } of lane) await creditChunk(ctx, distribution, chunk, position);
    }),
  );
  const failed = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  const result: DistributionResult = {
    request_id: distribution.distribution_id,
    confirms: chunks
      .flatMap((chunk) => chunk.recipients)
      .map((recipient) => ({ ...recipient, trade_ids_list: [recipient.trade_id] })),
  };
  // The request's claim completes with the distribution: the last write of the booking stores its answer.
  if (distribution.status !== 'completed')
    await completeDistribution(ctx, distribution, ctx.clock.nowMs(), claim(result));
  return result;
}

async function creditChunk(
  ctx: AppContext,
  distribution: Distribution,
  chunk: DistributionChunk,
  firstPosition: number,
): Promise<void> {
  if (chunk.recipients.length > RECIPIENTS_PER_CHUNK)
    return creditOversizedChunk(ctx, distribution, chunk, firstPosition);
  const asset = findAsset(distribution.asset);
  const quoted = findAsset(distribution.quoted_currency);
  if (!asset || !quoted)
    throw new Error(`award distribution ${distribution.distribution_id} names an asset missing from the registry`);
  const nowMs = ctx.clock.nowMs();
  const quantity = new Money(distribution.quantity);
  const escrow: Holder = { account: chunk.escrow, platform_code: null };
  const movement: Movement = {
    movement_id: chunk.movement_id,
    type: 'award_distribution',
    reference: `award_distribution:${distribution.platform_code}:${distribution.distribution_id}#${chunk.index}`,
    legs: chunk.recipients.flatMap((recipient) =>
      moveLegs(
        escrow,
        recipientAccount(distribution.platform_code, recipient.participant_code, asset.symbol),
        quantity,
      ),
    ),
  };
  const trades = chunk.recipients.flatMap((recipient, offset) =>
    tradeItems(ctx, awardTrade(distribution, recipient, firstPosition + offset, asset, quoted, nowMs)),
  );
  try {
    // Each recipient is still approved when its chunk commits: a customer locked after the distribution was
    // checked stops it at this chunk (a 400 naming the customer); credited chunks stay, and the same request
    // finishes it once the customer is approved again.
    const stillActive = participantActiveChecks(
      ctx,
      chunk.recipients.map((recipient) => ({ code: recipient.participant_code, field: 'participant_codes' })),
    );
    await bookMovement(
      ctx,
      movement,
      [
        chunkCreditedItem(ctx, distribution.platform_code, distribution.distribution_id, chunk.index, nowMs),
        ...stillActive,
        ...trades,
      ],
      nowMs,
    );
  } catch (error) {
    // Another run of this distribution credited the chunk first: its recipients are paid, nothing to do.
    if (error instanceof ChunkAlreadyCreditedError) return;
    // So too when the lane's escrow can't cover the chunk: the run that credited it first took the escrow's
    // part with it, and the booking names the first condition that failed, which may be the lane's guard
    // rather than the chunk's marker. Only a chunk found credited is taken as that; anything else stands.
    if (error instanceof InsufficientFundsError && (await creditedMeanwhile(ctx, distribution, chunk.index))) return;
    throw error;
  }
  // Counted by the run whose transaction credited the chunk, so a resumed or raced distribution counts each trade once.
  recordTradesAccepted(ctx.metrics, 'award_distribution', chunk.recipients.length, distribution.distribution_id);
}

/** Whether the chunk is credited now (read consistently): another run of the distribution got there first. */
async function creditedMeanwhile(ctx: AppContext, distribution: Distribution, index: number): Promise<boolean> {
  const now = await getDistributionChunk(ctx, distribution, index);
  return now?.status === 'credited';
}

/**
 * A chunk recorded under an older, larger chunk size (more recipients than one transaction now holds): credited
 * in parts of at most `RECIPIENTS_PER_CHUNK`, in order, from where the chunk says it got to. Each part is its
 * own movement (the chunk's movement id for the first, `<id>-<first recipient>` for the others: fixed by
 * the chunk and the part's start, whatever the part size at the time) with its recipients' trades, and its
 * marker (`chunkPartCreditedItem`) moves the chunk's count on, so each part commits once; a run that loses a
 * part to another reads the chunk again and goes on from there.
 */
async function creditOversizedChunk(
  ctx: AppContext,
  distribution: Distribution,
  chunk: DistributionChunk,
  firstPosition: number,
): Promise<void> {
  const asset = findAsset(distribution.asset);
  const quoted = findAsset(distribution.quoted_currency);
  if (!asset || !quoted)
    throw new Error(`award distribution ${distribution.distribution_id} names an asset missing from the registry`);
  const quantity = new Money(distribution.quantity);
  const escrow: Holder = { account: chunk.escrow, platform_code: null };
  const total = chunk.recipients.length;
  let from = chunk.credited_recipients ?? 0;
  while (from < total) {
    const to = Math.min(from + RECIPIENTS_PER_CHUNK, total);
    const recipients = chunk.recipients.slice(from, to);
    const nowMs = ctx.clock.nowMs();
    const movement: Movement = {
      movement_id: from === 0 ? chunk.movement_id : `${chunk.movement_id}-${from}`,
      type: 'award_distribution',
      reference: `award_distribution:${distribution.platform_code}:${distribution.distribution_id}#${chunk.index}${from === 0 ? '' : `+${from}`}`,
      legs: recipients.flatMap((recipient) =>
        moveLegs(
          escrow,
          recipientAccount(distribution.platform_code, recipient.participant_code, asset.symbol),
          quantity,
        ),
      ),
    };
    const trades = recipients.flatMap((recipient, offset) =>
      tradeItems(ctx, awardTrade(distribution, recipient, firstPosition + from + offset, asset, quoted, nowMs)),
    );
    try {
      const stillActive = participantActiveChecks(
        ctx,
        recipients.map((recipient) => ({ code: recipient.participant_code, field: 'participant_codes' })),
      );
      const marker = chunkPartCreditedItem(
        ctx,
        distribution.platform_code,
        distribution.distribution_id,
        chunk.index,
        { from, to, total },
        nowMs,
      );
      await bookMovement(ctx, movement, [marker, ...stillActive, ...trades], nowMs);
      recordTradesAccepted(ctx.metrics, 'award_distribution', recipients.length, distribution.distribution_id);
      from = to;
    } catch (error) {
      // A short escrow lane is a lost race too when the chunk moved on meanwhile (see `creditChunk`).
      if (!(error instanceof ChunkAlreadyCreditedError) && !(error instanceof InsufficientFundsError)) throw error;
      // Another run credited this part (or the whole chunk): go on from where the chunk now says.
      const now = await getDistributionChunk(ctx, distribution, chunk.index);
      if (!now || now.status === 'credited') return;
      const next = now.credited_recipients ?? 0;
      if (next <= from) throw error;
      from = next;
    }
  }
}

/**
 * The trade behind a confirm, so its `trade_id` resolves through GET /trades like any other: the customer
 * (buyer) receives `quantity` of the asset from the platform's pool (seller). An award is a gift, so the
 * seller receives nothing and the trade is priced 0, which keeps the record honest about what moved; the
 * pool's cost is on the fund trades that filled it.
 */
function awardTrade(
  distribution: Distribution,
  recipient: Recipient,
  position: number,
  asset: Asset,
  quoted: Asset,
  nowMs: number,
) {
  const platform = distribution.platform_code;
  const party = (
    side: 'buy' | 'sell',
    participantCode: string,
    receives: Asset,
    amount: string,
    accountLabel: string,
  ): TradeReportParty => ({
    side,
    participant_code: participantCode,
    asset: receives.symbol,
    amount,
    settling: true,
    account_label: accountLabel,
    liquidity_indicator: null,
    client_order_id: null,
    order_id: null,
    execution_id: null,
  });
  const report: TradeReport = {
    // One distribution makes many trades; the position keeps each client id distinct and traceable.
    client_trade_id: `${distribution.distribution_id}-${position}`,
    session_id: '',
    trade_reporter: platform,
    reporting_party: null,
    settlement_schedule: null,
    platform_code: platform,
    market_identifier_code: null,
    symbol: `${asset.symbol}/${quoted.symbol}`,
    product_type: 'spot',
    trade_type: 'regular',
    trade_price: '0',
    trade_quantity: distribution.quantity,
    amount_method: 'price_and_quantity',
    physical_delivery: true,
    transaction_timestamp: nowMs,
    comment: `award distribution ${distribution.distribution_id}`,
    parties_anonymous: false,
    settlement_price_index_id: null,
    settlement_timestamp: null,
    expiry_timestamp: null,
    bank_fee: null,
    contract_size: 1,
    underlying: asset.symbol,
    quoted_currency: quoted.symbol,
    parties: [
      party('buy', recipient.participant_code, asset, distribution.quantity, DEFAULT_ACCOUNT_LABEL),
      party(
        'sell',
        distribution.pool.participant_code,
        quoted,
        formatAmount(new Money(0), quoted),
        AWARDS_ACCOUNT_LABEL,
      ),
    ],
  };
  return settledTrade(report, { tradeId: recipient.trade_id, nowMs, accountGroups: [platform, platform] });
}
