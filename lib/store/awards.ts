import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { assert } from '../domain/assert.js';
import type { AccountRef } from '../domain/ledger.js';
import {
  AWARD_CHUNK_ITEM_VERSION,
  chunkEntity,
  distributionEntity,
  type Distribution,
  type Recipient,
  type StoredChunk,
} from './entities/award.js';
import { queryAll } from './table/query.js';
import { transactWrite } from './table/transactions.js';
import { type TaggedItem } from './table/transaction-items.js';
import type { AppContext } from '../context.js';
import { eventItem } from './events.js';

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

export { AWARD_CHUNK_ITEM_VERSION, type Distribution, type Recipient };
export type DistributionStatus = Distribution['status'];
export type ChunkStatus = StoredChunk['status'];

/** A chunk as a run credits it: the lane it pays from resolved (a chunk recorded before lanes pays from its distribution's). */
export interface DistributionChunk extends Omit<StoredChunk, 'platform_code' | 'distribution_id' | 'escrow'> {
  /**
   * The escrow account (lane) the chunk pays from, fixed at creation. Chunks recorded before lanes existed
   * have none stored and pay from the distribution's `escrow`.
   */
  escrow: AccountRef;
}

/** Phase 1's records, for the transaction that also moves pool -> escrow. New ids only. */
export function distributionCreationItems(
  ctx: Pick<AppContext, 'tables'>,
  distribution: Distribution,
  chunks: readonly DistributionChunk[],
): TaggedItem[] {
  const { platform_code: platform, distribution_id: id } = distribution;
  const record: TaggedItem = {
    item: distributionEntity.put(ctx.tables, distribution, { condition: 'attribute_not_exists(pk)' }),
    onConditionFailed: () => new DistributionExistsError(`award distribution ${id} already exists`),
  };
  const chunkItems = chunks.map(
    (chunk): TaggedItem => ({
      item: chunkEntity.put(
        ctx.tables,
        { ...chunk, platform_code: platform, distribution_id: id },
        { condition: 'attribute_not_exists(pk)' },
      ),
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
    item: chunkEntity.update(
      ctx.tables,
      { platform_code: platformCode, distribution_id: distributionId, index },
      {
        update: 'SET #status = :credited, credited_at = :now',
        condition: 'attribute_exists(pk) AND #status = :pending',
        names: { '#status': 'status' },
        values: { ':credited': 'credited', ':pending': 'pending', ':now': nowMs },
      },
    ),
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
    item: chunkEntity.update(
      ctx.tables,
      { platform_code: platformCode, distribution_id: distributionId, index },
      {
        update: last
          ? 'SET #status = :credited, credited_at = :now, credited_recipients = :to'
          : 'SET credited_recipients = :to',
        condition: `attribute_exists(pk) AND #status = :pending AND ${part.from === 0 ? 'attribute_not_exists(credited_recipients)' : 'credited_recipients = :from'}`,
        names: { '#status': 'status' },
        values: {
          ':pending': 'pending',
          ':to': part.to,
          ...(last && { ':credited': 'credited', ':now': nowMs }),
          ...(part.from > 0 && { ':from': part.from }),
        },
      },
    ),
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
    new GetCommand(
      chunkEntity.get(
        ctx.tables,
        { platform_code: distribution.platform_code, distribution_id: distribution.distribution_id, index },
        { consistent: true },
      ),
    ),
  );
  return out.Item ? chunkOf(out.Item, distribution.escrow) : undefined;
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
  const leaveOpen = distributionEntity.indexRemoval('gsi2');
  try {
    await transactWrite(ctx, [
      {
        item: distributionEntity.update(
          ctx.tables,
          { platform_code: platformCode, distribution_id: distributionId },
          {
            update: `SET #status = :completed, completed_at = :now REMOVE ${leaveOpen.expression}`,
            condition: 'attribute_exists(pk) AND #status = :distributing',
            names: { '#status': 'status', ...leaveOpen.names },
            values: { ':completed': 'completed', ':distributing': 'distributing', ':now': nowMs },
          },
        ),
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

/**
 * A chunk as stored, its lane resolved. Version 2 carries it (the parse refuses one that doesn't). Version 1 is
 * either shape written before item versions: a chunk recorded after lanes carries its lane too; one recorded
 * before lanes has none (parsed as null) and pays from its distribution's escrow.
 */
function chunkOf(item: Readonly<Record<string, unknown>>, distributionEscrow: AccountRef): DistributionChunk {
  const { platform_code: _platform, distribution_id: _distribution, escrow, ...chunk } = chunkEntity.parse(item);
  return { ...chunk, escrow: escrow ?? distributionEscrow };
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
  const partition = distributionEntity.partitionKey({ platform_code: platformCode, distribution_id: distributionId });
  const items = await queryAll(ctx, {
    ...distributionEntity.query(ctx.tables, 'table', partition),
    ConsistentRead: true,
  });
  const record = items.find((item) => item.type === distributionEntity.type);
  if (!record) return undefined;
  const distribution = distributionEntity.parse(record);
  const chunks = items
    .filter((item) => item.type === chunkEntity.type)
    .map((item) => chunkOf(item, distribution.escrow));
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
  const items = await queryAll(
    ctx,
    distributionEntity.query(ctx.tables, 'gsi2', distributionEntity.indexPartition('gsi2', {})),
  );
  return items.map((item) => {
    const { platform_code, distribution_id, created_at } = distributionEntity.parse(item);
    return { platform_code, distribution_id, created_at };
  });
}
