import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { distributionEntity } from '../entities/award.js';
import { accountEntity } from '../entities/ledger.js';
import { participantEntity } from '../entities/participant.js';
import { tradeEntity } from '../entities/trade.js';
import type { StoredItem } from '../entity/entity.js';
import { writtenUnlessConditionFailed } from '../table/conditional.js';
import { readInteger } from '../table/integers.js';
import { withRetry } from '../table/retry.js';
import { ITEM_VERSIONS } from './names.js';
import type { MigrationProgress } from './records.js';
import { type ItemOutcome, migrateEach, type Migration, scanUndone } from './run.js';
import type { AppContext } from '../../context.js';

/**
 * 0002: items of the entities whose readers had compatibility branches (accounts, participants, award chunks,
 * events, trades) written before they carried `item_version` (version 1) are brought to version 2 (lib/store/README.md,
 * "Item versions"): the attributes version 2 guarantees are written explicitly, with the values a version 1
 * reader gave them when absent, and `item_version` is stamped, in one update conditioned on
 * `attribute_not_exists(item_version)`. So a page done twice, two runs at once, or a booking that stamped the
 * item first change nothing twice; the defaults are `if_not_exists`, so a live writer's value (a booking's
 * version and movement count, a status change's counter) is never overwritten, and a writer racing the update
 * still finds what it read (bookings and status changes accept the default where they read an absent counter).
 *
 * It stamps 2, not the entities' current constants: once shipped a migration never changes, and a later
 * version is a later migration's.
 *
 * The whole table: a Scan of 100 items a page, filtered to those types without `item_version`. One platform:
 * the same Scan, filtered to items carrying its `platform_code` (system accounts and outside-world shards carry
 * none: only the whole-table run upgrades them).
 */

const TO_VERSION = 2;

type Ctx = Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>;
type Result = ItemOutcome;

/** An update of one item conditioned on its still being version 1; 'already' when it was not (or is gone). */
async function upgrade(
  ctx: Ctx,
  item: StoredItem,
  update: {
    set: string[];
    remove?: string[];
    condition?: string;
    names?: Record<string, string>;
    values?: Record<string, unknown>;
  },
): Promise<Result> {
  const remove = update.remove?.length ? ` REMOVE ${update.remove.join(', ')}` : '';
  const written = await withRetry(ctx, { what: 'item version upgrade' }, () =>
    writtenUnlessConditionFailed(
      ctx.db.send(
        new UpdateCommand({
          TableName: ctx.tables.main,
          Key: { pk: item.pk, sk: item.sk },
          UpdateExpression: `SET ${[...update.set, 'item_version = :itemVersion'].join(', ')}${remove}`,
          ConditionExpression: [
            'attribute_exists(pk) AND attribute_not_exists(item_version)',
            ...(update.condition ? [update.condition] : []),
          ].join(' AND '),
          ...(update.names && { ExpressionAttributeNames: update.names }),
          ExpressionAttributeValues: { ':itemVersion': TO_VERSION, ...update.values },
        }),
      ),
    ),
  );
  return written ? 'migrated' : 'already';
}

/**
 * The attributes the entity's definition says a version 1 item may lack, written with the value they meant
 * (`legacy` in lib/store/entities: an account's counters, a participant's status counter, a trade's sequence
 * and visibility), each `if_not_exists`.
 */
function upgradeFromLegacy(entity: { legacyAttributes: (version: number, item: StoredItem) => Readonly<StoredItem> }) {
  return (ctx: Ctx, item: StoredItem): Promise<Result> => {
    const defaults = Object.entries(entity.legacyAttributes(1, item));
    return upgrade(ctx, item, {
      set: defaults.map((_, i) => `#a${i} = if_not_exists(#a${i}, :a${i})`),
      names: Object.fromEntries(defaults.map(([name], i) => [`#a${i}`, name])),
      values: Object.fromEntries(defaults.map(([, value], i) => [`:a${i}`, value])),
    });
  };
}

/** An award chunk: `escrow`, its distribution's (what a chunk recorded before lanes pays from). */
async function upgradeChunk(ctx: Ctx, item: StoredItem): Promise<Result> {
  if (item.escrow !== undefined) return upgrade(ctx, item, { set: [] });
  const out = await ctx.db.send(
    new GetCommand(
      distributionEntity.get(
        ctx.tables,
        { platform_code: String(item.platform_code), distribution_id: String(item.distribution_id) },
        { consistent: true },
      ),
    ),
  );
  if (out.Item?.escrow === undefined) return skipped(ctx, item, 'its distribution (and its escrow) not found');
  return upgrade(ctx, item, {
    set: ['escrow = if_not_exists(escrow, :escrow)'],
    values: { ':escrow': out.Item.escrow },
  });
}

/**
 * An event: its expiry in `ttl`. One written before the items were trimmed holds it in `expires_at_ms`: that
 * becomes its `ttl` (rounded up to the second, as events are written now) and goes.
 */
function upgradeEvent(ctx: Ctx, item: StoredItem): Promise<Result> {
  if (item.expires_at_ms !== undefined) {
    const expiresAtMs = readInteger(item.expires_at_ms);
    return upgrade(ctx, item, {
      set: ['#ttl = :ttl'],
      remove: ['expires_at_ms'],
      condition: 'expires_at_ms = :expiresAtMs',
      names: { '#ttl': 'ttl' },
      values: { ':ttl': Math.ceil(expiresAtMs / 1000), ':expiresAtMs': item.expires_at_ms },
    });
  }
  if (item.ttl === undefined) return Promise.resolve(skipped(ctx, item, 'an event without an expiry'));
  return upgrade(ctx, item, { set: [] });
}

function skipped(ctx: Ctx, item: StoredItem, why: string): Result {
  ctx.logger.warn(`migration: ${why}; left alone`, { migration: ITEM_VERSIONS, pk: item.pk, sk: item.sk });
  return 'skipped';
}

const UPGRADES: Record<string, (ctx: Ctx, item: StoredItem) => Promise<Result>> = {
  account: upgradeFromLegacy(accountEntity),
  participant: upgradeFromLegacy(participantEntity),
  award_distribution_chunk: upgradeChunk,
  event: upgradeEvent,
  trade: upgradeFromLegacy(tradeEntity),
};

export const itemVersions: Migration = {
  name: ITEM_VERSIONS,
  description:
    'accounts, participants, award chunks, events and trades written before they carried item_version: the attributes version 2 guarantees written explicitly (their legacy defaults), item_version 2 stamped',
  async page(ctx, { platformCode }, position, progress: MigrationProgress) {
    const out = await scanUndone(
      ctx,
      { types: Object.keys(UPGRADES), missing: 'item_version', platformCode },
      position,
    );
    await migrateEach(out.Items ?? [], progress, (item) => UPGRADES[item.type]!(ctx, item));
    return out.LastEvaluatedKey;
  },
};
