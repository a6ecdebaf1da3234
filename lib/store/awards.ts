import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { assert } from '../domain/assert.js';
import type { AccountRef } from '../domain/ledger.js';
import { queryAll } from './table/query.js';
import { keys } from './keys.js';
import { readInteger, readOptionalInteger } from './table/numbers.js';
import { transactWrite } from './table/transactions.js';
import { type TaggedItem } from './table/transaction-items.js';
import type { AppContext } from '../context.js';
import { eventItem } from './events.js';
import { itemVersionOf } from './table/item-versions.js';

/**
 * Award distributions. A distribution can credit more recipients than one transaction holds, so it is
 * written in two phases:
 *
 *   1. one transaction: the distribution (`distributing`), every chunk (`pending`, with its recipients, their
 *      trade ids and the escrow lane it pays from fixed up front), and the movement pool -> escrow lanes for
 *      quantity × N (each lane what its chunks pay out);
 *   2. per chunk, one transaction: the chunk `pending` -> `credited` (the condition that stops a retried
 *      chunk from crediting anyone twice), the movement escrow lane -> recipients and a trade per recipient;
 *      the lanes' chunks in parallel, each lane's in order;
 *   then the distribution `distributing` -> `completed`.
 *
 * Items, all in the partition `AWARDS#<platform>#<distribution id>`:
 *   sk DISTRIBUTION  the request and its state; on gsi2 (`AWARDS#OPEN`) only while not completed.
 *   sk CHUNK#nnnn    one chunk: its recipients in request order, their trade ids, its movement id, its state.
 */

export type DistributionStatus = 'distributing' | 'completed';
export type ChunkStatus = 'pending' | 'credited';

export interface Recipient {
  participant_code: string;
  trade_id: string;
}

export interface Distribution {
  platform_code: string;
  /** The request's X-Request-Id when it had one, else an id of our own; echoed as `request_id`. */
  distribution_id: string;
  asset: string;
  /** Each recipient's amount, fixed-point with the asset's decimals. */
  quantity: string;
  quoted_currency: string;
  recipient_count: number;
  /** quantity × recipient_count: what left the pool for the escrow. */
  total: string;
  /** `distributionFingerprint` of the request, so a retry asking for something else is refused. */
  fingerprint: string;
  pool: AccountRef;
  /** The first escrow lane's account (each chunk names its own); the only one of distributions recorded before lanes. */
  escrow: AccountRef;
  chunk_count: number;
  status: DistributionStatus;
  created_at: number;
  completed_at: number | null;
}

export interface DistributionChunk {
  index: number;
  recipients: Recipient[];
  /** Fixed at creation, so a retried chunk writes the same movement id (which can exist only once). */
  movement_id: string;
  /**
   * The escrow account (lane) the chunk pays from, fixed at creation. Chunks recorded before lanes existed
   * have none stored and pay from the distribution's `escrow`.
   */
  escrow: AccountRef;
  status: ChunkStatus;
  credited_at: number | null;
  /**
   * Recipients credited so far of a chunk recorded larger than one transaction now holds (an older, larger
   * chunk size), credited in parts: absent until its first part commits. See `chunkPartCreditedItem`.
   */
  credited_recipients?: number;
}

/**
 * The award chunk item's schema version (lib/store/README.md, "Item versions"). 2: it carries `escrow`, the
 * lane it pays from. 1 (no `item_version`): recorded before lanes, without `escrow`: it pays from its
 * distribution's.
 */
export const AWARD_CHUNK_ITEM_VERSION = 2;

/** Phase 1's records, for the transaction that also moves pool -> escrow. New ids only. */
export function distributionCreationItems(
  ctx: Pick<AppContext, 'tables'>,
  distribution: Distribution,
  chunks: readonly DistributionChunk[],
): TaggedItem[] {
  const table = ctx.tables.main;
  const { platform_code: platform, distribution_id: id } = distribution;
  const record: TaggedItem = {
    item: {
      Put: {
        TableName: table,
        Item: {
          ...distribution,
          ...keys.awardDistribution(platform, id),
          gsi2pk: keys.openAwardDistributions(),
          gsi2sk: keys.openAwardDistributionSortKey(distribution.created_at, platform, id),
          type: 'award_distribution',
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    onConditionFailed: () => new DistributionExistsError(`award distribution ${id} already exists`),
  };
  const chunkItems = chunks.map(
    (chunk): TaggedItem => ({
      item: {
        Put: {
          TableName: table,
          Item: {
            ...chunk,
            ...keys.awardDistributionChunk(platform, id, chunk.index),
            type: 'award_distribution_chunk',
            platform_code: platform,
            distribution_id: id,
            item_version: AWARD_CHUNK_ITEM_VERSION,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      onConditionFailed: () => new DistributionExistsError(`award distribution ${id} already exists`),
    }),
  );
  return [record, ...chunkItems];
}

/** Phase 1 lost a race with an identical request (same id) that wrote the distribution first. */
export class DistributionExistsError extends Error {
  override readonly name = 'DistributionExistsError';
}

/** A chunk's transaction found it no longer pending: another run of the same distribution credited it. */
export class ChunkAlreadyCreditedError extends Error {
  override readonly name = 'ChunkAlreadyCreditedError';
}

/**
 * The chunk's marker for its crediting transaction: `pending` -> `credited`, so of any number of runs
 * crediting this chunk exactly one commits. Goes first in the transaction, so a lost race reads as such.
 */
export function chunkCreditedItem(
  ctx: Pick<AppContext, 'tables'>,
  platformCode: string,
  distributionId: string,
  index: number,
  nowMs: number,
): TaggedItem {
  return {
    item: {
      Update: {
        TableName: ctx.tables.main,
        Key: keys.awardDistributionChunk(platformCode, distributionId, index),
        UpdateExpression: 'SET #status = :credited, credited_at = :now',
        ConditionExpression: 'attribute_exists(pk) AND #status = :pending',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':credited': 'credited', ':pending': 'pending', ':now': nowMs },
      },
    },
    onConditionFailed: () =>
      new ChunkAlreadyCreditedError(`chunk ${index} of award distribution ${distributionId} is already credited`),
  };
}

/**
 * The marker for one part of an oversized chunk (recorded under an older, larger chunk size): recipients
 * `from`..`to` (exclusive) of `total`. Conditioned on the chunk pending with exactly `from` credited, and
 * moves `credited_recipients` to `to` (the last part also marks the chunk `credited`), so each part commits
 * once and in order; a lost race reads as `ChunkAlreadyCreditedError` (read the chunk again to go on).
 */
export function chunkPartCreditedItem(
  ctx: Pick<AppContext, 'tables'>,
  platformCode: string,
  distributionId: string,
  index: number,
  part: { from: number; to: number; total: number },
  nowMs: number,
): TaggedItem {
  assert(
    part.from >= 0 && part.from < part.to && part.to <= part.total,
    () => `chunk ${index} of award distribution ${distributionId}: part ${part.from}..${part.to} of ${part.total}`,
  );
  const last = part.to >= part.total;
  return {
    item: {
      Update: {
        TableName: ctx.tables.main,
        Key: keys.awardDistributionChunk(platformCode, distributionId, index),
        UpdateExpression: last
          ? 'SET #status = :credited, credited_at = :now, credited_recipients = :to'
          : 'SET credited_recipients = :to',
        ConditionExpression: `attribute_exists(pk) AND #status = :pending AND ${part.from === 0 ? 'attribute_not_exists(credited_recipients)' : 'credited_recipients = :from'}`,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':pending': 'pending',
          ':to': part.to,
          ...(last && { ':credited': 'credited', ':now': nowMs }),
          ...(part.from > 0 && { ':from': part.from }),
        },
      },
    },
    onConditionFailed: () =>
      new ChunkAlreadyCreditedError(
        `recipients ${part.from}.. of chunk ${index} of award distribution ${distributionId} are already credited`,
      ),
  };
}

/** One chunk as stored now, read consistently (a part of it may have been credited a moment ago). */
export async function getDistributionChunk(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  distribution: Distribution,
  index: number,
): Promise<DistributionChunk | undefined> {
  const out = await ctx.db.send(
    new GetCommand({
      TableName: ctx.tables.main,
      Key: keys.awardDistributionChunk(distribution.platform_code, distribution.distribution_id, index),
      ConsistentRead: true,
    }),
  );
  return out.Item ? toChunk(out.Item, distribution.escrow) : undefined;
}

/**
 * `distributing` -> `completed`, leaving the open-distributions index. False when another run completed
 * it first (harmless: the chunks' markers already guarantee each recipient was credited once).
 */
export async function completeDistribution(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  distribution: Distribution,
  nowMs: number,
  alongWith: readonly TaggedItem[] = [],
): Promise<boolean> {
  const { platform_code: platformCode, distribution_id: distributionId } = distribution;
  try {
    await transactWrite(ctx, [
      {
        item: {
          Update: {
            TableName: ctx.tables.main,
            Key: keys.awardDistribution(platformCode, distributionId),
            UpdateExpression: 'SET #status = :completed, completed_at = :now REMOVE gsi2pk, gsi2sk',
            ConditionExpression: 'attribute_exists(pk) AND #status = :distributing',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':completed': 'completed', ':distributing': 'distributing', ':now': nowMs },
          },
        },
        onConditionFailed: () => new DistributionCompletedError(),
      },
      // The only status change a distribution has after its creation, so its sequence is 1.
      eventItem(
        ctx,
        {
          type: 'award_distribution.completed',
          platformCode,
          resource: { type: 'award_distribution', id: distributionId },
          sequence: 1,
          previousStatus: 'distributing',
          data: completedDistributionView({ ...distribution, status: 'completed', completed_at: nowMs }),
        },
        nowMs,
      ),
      ...alongWith,
    ]);
    return true;
  } catch (error) {
    if (error instanceof DistributionCompletedError) return false;
    throw error;
  }
}

/**
 * A completed distribution as its event shows it: what the request asked for and what was paid (the
 * recipients' trades have trade.status_changed events of their own; GET /trades lists them).
 */
function completedDistributionView(distribution: Distribution) {
  return {
    request_id: distribution.distribution_id,
    asset: distribution.asset,
    quantity: distribution.quantity,
    quoted_currency: distribution.quoted_currency,
    recipient_count: distribution.recipient_count,
    total: distribution.total,
    chunk_count: distribution.chunk_count,
    status: distribution.status,
    created_at: distribution.created_at,
    completed_at: distribution.completed_at,
  };
}

/** Another run completed the distribution first. */
class DistributionCompletedError extends Error {
  override readonly name = 'DistributionCompletedError';
}

function accountRef(raw: Record<string, any>): AccountRef {
  return {
    participant_code: raw.participant_code,
    account_group: raw.account_group,
    account_label: raw.account_label,
    asset: raw.asset,
  };
}

function toDistribution(item: Record<string, any>): Distribution {
  return {
    platform_code: item.platform_code,
    distribution_id: item.distribution_id,
    asset: item.asset,
    quantity: item.quantity,
    quoted_currency: item.quoted_currency,
    recipient_count: readInteger(item.recipient_count),
    total: item.total,
    fingerprint: item.fingerprint,
    pool: accountRef(item.pool),
    escrow: accountRef(item.escrow),
    chunk_count: readInteger(item.chunk_count),
    status: item.status,
    created_at: readInteger(item.created_at),
    completed_at: readOptionalInteger(item.completed_at),
  };
}

/**
 * The lane a chunk pays from. Version 2 carries it. Version 1 is either shape written before item versions: a
 * chunk recorded after lanes carries its lane too; one recorded before lanes has none and pays from its
 * distribution's escrow.
 */
function chunkEscrow(item: Record<string, any>, distributionEscrow: AccountRef): AccountRef {
  if (itemVersionOf(item) >= AWARD_CHUNK_ITEM_VERSION) {
    if (item.escrow === undefined)
      throw new Error(`no escrow in ${item.pk} ${item.sk} at item_version ${item.item_version}`);
    return accountRef(item.escrow);
  }
  return item.escrow === undefined ? distributionEscrow : accountRef(item.escrow);
}

function toChunk(item: Record<string, any>, distributionEscrow: AccountRef): DistributionChunk {
  return {
    index: readInteger(item.index),
    recipients: (item.recipients as Record<string, any>[]).map((recipient) => ({
      participant_code: recipient.participant_code,
      trade_id: recipient.trade_id,
    })),
    movement_id: item.movement_id,
    escrow: chunkEscrow(item, distributionEscrow),
    status: item.status,
    credited_at: readOptionalInteger(item.credited_at),
    ...(item.credited_recipients !== undefined && { credited_recipients: readInteger(item.credited_recipients) }),
  };
}

export interface StoredDistribution {
  distribution: Distribution;
  /** In index order (the sort key pads the index), so recipients come back in request order. */
  chunks: DistributionChunk[];
}

/**
 * A distribution and its chunks in one strongly consistent Query: a resuming run decides which chunks to
 * credit from what it reads here, and a chunk credited a moment ago must not look pending.
 */
export async function getDistribution(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  platformCode: string,
  distributionId: string,
): Promise<StoredDistribution | undefined> {
  const items = await queryAll(ctx, {
    TableName: ctx.tables.main,
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.awardDistributionPartition(platformCode, distributionId) },
    ConsistentRead: true,
  });
  const record = items.find((item) => item.type === 'award_distribution');
  if (!record) return undefined;
  const distribution = toDistribution(record);
  const chunks = items
    .filter((item) => item.type === 'award_distribution_chunk')
    .map((item) => toChunk(item, distribution.escrow));
  // A distribution completes only after every chunk's `pending` -> `credited` committed (distribute-awards.ts
  // `finish`): a completed one with a pending chunk means a recipient was never paid, or paid by a run that
  // skipped the chunk's condition.
  assert(
    distribution.status !== 'completed' || chunks.every((chunk) => chunk.status === 'credited'),
    () => `award distribution ${platformCode}/${distributionId} is completed with a chunk still pending`,
  );
  return { distribution, chunks: chunks.sort((a, b) => a.index - b.index) };
}

/** Ops: distributions not completed, oldest first (the index is eventually consistent; re-read before acting). */
export async function listOpenDistributions(
  ctx: Pick<AppContext, 'db' | 'tables'>,
): Promise<{ platform_code: string; distribution_id: string; created_at: number }[]> {
  const items = await queryAll(ctx, {
    TableName: ctx.tables.main,
    IndexName: 'gsi2',
    KeyConditionExpression: 'gsi2pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.openAwardDistributions() },
  });
  return items.map((item) => ({
    platform_code: item.platform_code,
    distribution_id: item.distribution_id,
    created_at: readInteger(item.created_at),
  }));
}
