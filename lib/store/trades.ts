import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { assert } from '../domain/assert.js';
import { ConflictError } from '../domain/errors.js';
import { dueAfterAcceptanceMs, dueAfterStepMs } from '../domain/settlement-schedule.js';
import type { SettlementState, TradeState } from '../domain/settlement.js';
import { queryAll } from './table/query.js';
import { batchGetItems } from './table/batch-get.js';
import {
  combineFilters,
  equalityFilter,
  pageWithCount,
  type ListBinding,
  type ListIndex,
  type PageRequest,
} from './table/paging.js';
import {
  OPEN_SHARDS,
  type StoredTrade,
  TRADE_DUE_ATTRIBUTE,
  tradeEntity,
  tradeOfEntry,
  tradeVisibilityEntity,
} from './entities/trade.js';
import { ALL, bucketOf, readCount } from './table/counters.js';
import { type CountChange } from './table/transaction-items.js';
import { transactWrite } from './table/transactions.js';
import { type TaggedItem } from './table/transaction-items.js';
import { clientIdClaim } from './windows.js';
import type { AppContext } from '../context.js';
import { tradeView, type Trade, type TradeParty } from '../domain/trade.js';
import { eventItemsFor } from './events.js';
import { writtenUnlessConditionFailed } from './table/conditional.js';

/**
 * Trades: the record behind `POST /trades` and the settlement workflow, and the trades other use cases
 * (quote execution, rewards, awards) book already settled. The items (the trade, a visibility entry per other
 * platform that may see it) are defined in entities/trade.ts; the local settlement history shares the
 * trade's partition (settlement-history.ts).
 */

/** Raised by the trade item's condition: the id was already taken (a programming error with random ids). */
class TradeIdTakenError extends Error {
  override readonly name = 'TradeIdTakenError';
}

/** Raised by a conditional trade update: the trade was no longer in the state the writer expected. */
export class TradeStateChangedError extends Error {
  override readonly name = 'TradeStateChangedError';
}

/** The trade item's schema version (lib/store/README.md, "Item versions"; entities/trade.ts). */
export const TRADE_ITEM_VERSION = tradeEntity.version!;

/**
 * Everything that creates `trade`, for the caller's own transaction: the trade item (new id only) and a
 * visibility entry per other platform that may see it. An open trade also enters the sparse index of
 * trades to resume, a terminated one doesn't.
 */
export function tradeItems(ctx: Pick<AppContext, 'tables'>, trade: Trade): TaggedItem[] {
  const tradeItem: TaggedItem = {
    item: tradeEntity.put(
      ctx.tables,
      { ...trade, ...listingEntry(trade) },
      {
        condition: 'attribute_not_exists(pk)',
        extra: trade.trade_state === 'terminated' ? {} : openIndexParts(trade),
      },
    ),
    onConditionFailed: () => new TradeIdTakenError(`trade id ${trade.trade_id} is taken`),
    counts: tradeCounts(trade.platform_code, trade.trade_state, 1),
  };
  const entries = otherPlatforms(trade).map(
    (platform): TaggedItem => ({
      item: tradeListEntryItem(ctx, trade, platform),
      counts: tradeCounts(platform, trade.trade_state, 1),
    }),
  );
  return [tradeItem, ...entries, ...tradeStatusEvents(ctx, trade, null, trade.last_update)];
}

/**
 * Another platform's list entry of `trade`: the trade whole, keyed for `platformCode`, the reporter's platform as
 * `reported_by` (entities/trade.ts). `condition` for a write that must find the entry as it expects (migration 0003).
 */
export function tradeListEntryItem(
  ctx: Pick<AppContext, 'tables'>,
  trade: Trade,
  platformCode: string,
  condition?: string,
): TaggedItem['item'] {
  return tradeVisibilityEntity.put(
    ctx.tables,
    { ...trade, ...listingEntry(trade), platform_code: platformCode, reported_by: trade.platform_code },
    condition === undefined ? undefined : { condition },
  );
}

/**
 * `trade.status_changed`, one per platform that may read the trade, with the trade as
 * GET /trades/{trade_id} shows it. The status is `trade_state`; the settlement state is in the data.
 */
function tradeStatusEvents(
  ctx: Pick<AppContext, 'tables'>,
  trade: Trade,
  previousStatus: string | null,
  nowMs: number,
): TaggedItem[] {
  return eventItemsFor(
    ctx,
    trade.visible_to,
    {
      type: 'trade.status_changed',
      resource: { type: 'trade', id: trade.trade_id },
      sequence: trade.status_sequence,
      previousStatus,
      data: tradeView(trade),
    },
    nowMs,
  );
}

const TRADES_LIST = 'trades';

/** A trade entering (+1) or leaving (-1) a platform's trade list and its count by `trade_state`. */
function tradeCounts(platformCode: string, state: TradeState, delta: 1 | -1): CountChange[] {
  return [
    { platformCode, list: TRADES_LIST, bucket: ALL, delta },
    { platformCode, list: TRADES_LIST, bucket: bucketOf('trade_state', state), delta },
  ];
}

/** A trade moving from one `trade_state` to another in a platform's counts. */
function tradeStateMove(platformCode: string, from: TradeState, to: TradeState): CountChange[] {
  return [
    { platformCode, list: TRADES_LIST, bucket: bucketOf('trade_state', from), delta: -1 },
    { platformCode, list: TRADES_LIST, bucket: bucketOf('trade_state', to), delta: 1 },
  ];
}

function otherPlatforms(trade: Pick<Trade, 'platform_code' | 'visible_to'>): string[] {
  return trade.visible_to.filter((platform) => platform !== trade.platform_code);
}

/**
 * The party filters of `GET /trades`, carried on the trade and on every visibility entry (with the trade's
 * own filtered fields) so a filtered page is one query whichever platform asks.
 */
function listingEntry(trade: Trade) {
  return {
    party_codes: [...new Set(trade.parties.map((party) => party.participant_code))],
    account_labels: [...new Set(trade.parties.map((party) => party.account_label))],
  };
}

/** The 72-hour claim on the trade's `client_trade_id`; goes into the same transaction as `tradeItems`. */
export function clientTradeIdClaim(
  ctx: Pick<AppContext, 'tables'>,
  trade: Pick<Trade, 'platform_code' | 'client_trade_id' | 'trade_id'>,
  nowMs: number,
): TaggedItem {
  return {
    item: clientIdClaim(ctx, 'trade', trade.platform_code, trade.client_trade_id, nowMs, trade.trade_id),
    onConditionFailed: () => new ConflictError(['client_trade_id: already used in the last 72 hours']),
  };
}

export { OPEN_SHARDS };

/** An open trade's place in the open-trades index: its shard, and when its settlement is first due. */
function openIndexParts(trade: Pick<Trade, 'trade_id' | 'accepted_timestamp' | 'settlement_timestamp'>) {
  return { shard: shardOf(trade.trade_id), due_ms: dueAfterAcceptanceMs(trade) };
}

function shardOf(tradeId: string): number {
  let sum = 0;
  for (const char of tradeId) sum = (sum + char.charCodeAt(0)) % OPEN_SHARDS;
  return sum;
}

// ---------------------------------------------------------------------------------------------------------
// Reading

/**
 * A trade item read back. A version 1 trade (no `item_version`) from before cross-platform visibility has no
 * `visible_to`: its reporter alone may see it, a default that depends on the item, so it is given here; the
 * parse fills the rest of what version 1 lacked. The list filters' attributes stay in the store.
 */
function parseTrade(item: Record<string, unknown>): Trade {
  return withoutFilters(tradeEntity.parse(item));
}

/** The trade without the list filters it is stored with. */
function withoutFilters({ party_codes: _codes, account_labels: _labels, ...trade }: StoredTrade): Trade {
  return trade;
}

/** One trade. Settlement tasks read consistently: they decide on the state they are about to condition on. */
export async function getTrade(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  tradeId: string,
  options: { consistent?: boolean } = {},
): Promise<Trade | undefined> {
  const out = await ctx.db.send(
    new GetCommand({
      ...tradeEntity.get(ctx.tables, { trade_id: tradeId }),
      ConsistentRead: options.consistent ?? false,
    }),
  );
  return out.Item ? parseTrade(out.Item) : undefined;
}

/** A trade the platform may read, else undefined (another platform's trade is indistinguishable from none). */
export async function getTradeVisibleTo(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  platformCode: string,
  tradeId: string,
): Promise<Trade | undefined> {
  const trade = await getTrade(ctx, tradeId);
  return trade && trade.visible_to.includes(platformCode) ? trade : undefined;
}

async function batchGetTrades(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  tradeIds: readonly string[],
): Promise<Map<string, Trade>> {
  const items = await batchGetItems(
    ctx,
    tradeIds.map((id) => tradeEntity.key({ trade_id: id })),
    { what: 'trades read' },
  );
  return new Map(items.map((item) => [item.trade_id as string, parseTrade(item)]));
}

/** The filters of `GET /trades` that the index entries carry (time bounds are the key range). */
export interface TradeListFilters {
  client_trade_id?: string;
  trade_state?: TradeState;
  /** `'null'`: no settlement attempted yet. */
  settlement_state?: Exclude<SettlementState, null> | 'null';
  party_code?: string;
  reporting_party?: string;
  account_label?: string;
  market_identifier_code?: string;
}

function tradeListIndex(
  platformCode: string,
  range: { fromMs?: number; toMs?: number },
  filters: TradeListFilters,
): ListIndex | undefined {
  if (range.toMs !== undefined && range.toMs < 0) return undefined;
  const from = tradeEntity.indexSortKey('gsi1', {
    transaction_timestamp: Math.max(0, range.fromMs ?? 0),
    trade_id: '',
  });
  // '~' sorts after every trade id character, so the upper bound includes all trades at `toMs`.
  const to = tradeEntity.indexSortKey('gsi1', {
    transaction_timestamp: range.toMs ?? 999_999_999_999_999,
    trade_id: '~',
  });
  if (from > to) return undefined;
  const { settlement_state, party_code, account_label, ...equal } = filters;
  const filter = combineFilters([
    equalityFilter({ ...equal, settlement_state: settlement_state === 'null' ? undefined : settlement_state }),
    settlement_state === 'null'
      ? {
          expression: 'attribute_not_exists(#f_ss) OR attribute_type(#f_ss, :f_null)',
          names: { '#f_ss': 'settlement_state' },
          values: { ':f_null': 'NULL' },
        }
      : undefined,
    party_code === undefined
      ? undefined
      : {
          expression: 'contains(#f_parties, :f_party)',
          names: { '#f_parties': 'party_codes' },
          values: { ':f_party': party_code },
        },
    account_label === undefined
      ? undefined
      : {
          expression: 'contains(#f_labels, :f_label)',
          names: { '#f_labels': 'account_labels' },
          values: { ':f_label': account_label },
        },
  ]);
  return tradeEntity.listIndex(
    'gsi1',
    { platform_code: platformCode },
    { sortRange: { between: [from, to] }, descending: true, ...(filter && { filter }) },
  );
}

/**
 * One page of the trades a platform sees (reported by it, or with one of its participants as a party),
 * newest transaction first, within a transaction-time range (inclusive, ms): one query of the platform's
 * entries, and one batch read for the trades other platforms reported.
 */
export async function pageOfTrades(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'config' | 'caches' | 'retry' | 'cursorKey'>,
  platformCode: string,
  range: { fromMs?: number; toMs?: number },
  filters: TradeListFilters,
  request: PageRequest,
  bindingFilters: ListBinding['filters'],
): Promise<{ trades: Trade[]; page: number; nextCursor: string | null; count: number | null }> {
  const index = tradeListIndex(platformCode, range, filters);
  if (!index) return { trades: [], page: request.page, nextCursor: null, count: 0 };
  // Counted: all trades, and trades by trade_state; other filters and time bounds are counted by reading.
  const { trade_state, ...others } = filters;
  const counted =
    range.fromMs === undefined &&
    range.toMs === undefined &&
    Object.values(others).every((value) => value === undefined);
  const counter = counted
    ? () =>
        readCount(
          ctx,
          platformCode,
          TRADES_LIST,
          trade_state === undefined ? ALL : bucketOf('trade_state', trade_state),
        )
    : undefined;
  const { count, ...page } = await pageWithCount(
    ctx,
    index,
    request,
    { list: TRADES_LIST, platformCode, filters: bindingFilters },
    counter,
  );
  // The page's entries: the platform's own trades, and another platform's trades as their visibility entries
  // carry them (an entry written before entries carried the trade names it, and its trade is read).
  const entries = page.items.map((item: Record<string, unknown>): { trade?: Trade; pointer?: string } => {
    if (item.type !== tradeVisibilityEntity.type) return { trade: parseTrade(item) };
    const carried = tradeOfEntry(item);
    return carried ? { trade: withoutFilters(carried) } : { pointer: tradeVisibilityEntity.parse(item).trade_id };
  });
  const pointed = entries.flatMap((entry) => (entry.pointer === undefined ? [] : [entry.pointer]));
  const fetched = pointed.length > 0 ? await batchGetTrades(ctx, pointed) : new Map<string, Trade>();
  const trades: Trade[] = [];
  for (const entry of entries) {
    const trade = entry.trade ?? fetched.get(entry.pointer!);
    if (trade) trades.push(trade);
  }
  return { trades, page: page.page, nextCursor: page.nextCursor, count };
}

/** Every trade not yet terminated, oldest acceptance first: what the settlement runner resumes. */
export async function listOpenTrades(ctx: Pick<AppContext, 'db' | 'tables'>): Promise<Trade[]> {
  const shards = await Promise.all(
    Array.from({ length: OPEN_SHARDS }, (_, shard) =>
      queryAll(ctx, tradeEntity.query(ctx.tables, 'gsi2', tradeEntity.indexPartition('gsi2', { shard }))),
    ),
  );
  // The index is eventually consistent; a trade terminated a moment ago may still show up, so filter on the
  // state as well (resuming one would be harmless, only wasteful).
  return shards
    .flat()
    .map(parseTrade)
    .filter((trade) => trade.trade_state !== 'terminated')
    .sort((a, b) => a.accepted_timestamp - b.accepted_timestamp || a.trade_id.localeCompare(b.trade_id));
}

/** An open trade whose settlement is due, as the open-trades index holds it (the whole trade item). */
export interface DueTrade {
  trade: Trade;
  /** The index sort key read: a postponement is conditioned on it, so it never undoes a state change's. */
  dueKey: string;
}

/**
 * One page of an open-trades shard: trades due by `dueByMs`, most overdue first. `startKey` continues
 * within the shard; `nextKey` is undefined once the shard has nothing more due.
 */
export async function dueTradesPage(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  shard: number,
  dueByMs: number,
  limit: number,
  startKey?: Record<string, unknown>,
): Promise<{ trades: DueTrade[]; nextKey: Record<string, unknown> | undefined }> {
  const out = await ctx.db.send(
    new QueryCommand({
      ...tradeEntity.query(
        ctx.tables,
        'gsi2',
        tradeEntity.indexPartition('gsi2', { shard }),
        // '~' sorts after every trade id character: every trade due at `dueByMs` is in.
        { atMost: tradeEntity.indexSortKey('gsi2', { due_ms: dueByMs, trade_id: '~' }) },
      ),
      Limit: limit,
      ExclusiveStartKey: startKey,
    }),
  );
  return {
    trades: (out.Items ?? []).map((item) => ({
      trade: parseTrade(item),
      dueKey: String(item[TRADE_DUE_ATTRIBUTE]),
    })),
    nextKey: out.LastEvaluatedKey,
  };
}

/**
 * Moves an open trade's due time to `dueAtMs` (the sweep, after it made sure the trade has a live
 * execution, so the next sweep goes on to other trades). Conditioned on the key it read: a settlement step
 * that wrote meanwhile set a due time of its own, which stands; a terminated trade stays out of the index.
 */
export async function postponeDue(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  due: DueTrade,
  dueAtMs: number,
): Promise<boolean> {
  const tradeId = due.trade.trade_id;
  const next = tradeEntity.indexAssignment('gsi2', { shard: shardOf(tradeId), due_ms: dueAtMs, trade_id: tradeId });
  return writtenUnlessConditionFailed(
    ctx.db.send(
      new UpdateCommand(
        tradeEntity.update(
          ctx.tables,
          { trade_id: tradeId },
          {
            update: `SET ${next.expression}`,
            condition: '#due = :read',
            names: { ...next.names, '#due': TRADE_DUE_ATTRIBUTE },
            values: { ...next.values, ':read': due.dueKey },
          },
        ).Update,
      ),
    ),
  );
}

// ---------------------------------------------------------------------------------------------------------
// State changes

/** The fields a settlement step may change; `last_update` is always set. */
interface TradeChanges {
  trade_state?: TradeState;
  settlement_state?: SettlementState;
  current_obligations_met_timestamp?: number | null;
  obligations_outstanding_timestamp?: number | null;
  settled_timestamp?: number | null;
  defaulted_timestamp?: number | null;
  parties?: readonly TradeParty[];
}

/**
 * The conditional update moving a trade, applied only while `trade_state` is still the state the caller
 * read (which must be one of `expected`), so a retried or duplicated task can't move a trade twice (it fails
 * with TradeStateChangedError instead) and the counts by state move from the right state. Terminating a trade
 * takes it out of the open-trades index in the same write. The other platforms' list entries get the new
 * states in the same transaction, so their filtered lists stay exact.
 *
 * A change of `trade_state` or `settlement_state` is a status change: it records its trade.status_changed
 * events in the same transaction, numbered by the trade's `status_sequence`, which the update increments on
 * the condition that it is still the number read (two runs moving the settlement state within `active`
 * can't both number their event the same).
 */
export function tradeUpdateItems(
  ctx: Pick<AppContext, 'tables' | 'config'>,
  trade: Trade,
  expected: readonly TradeState[],
  changes: TradeChanges,
  nowMs: number,
): TaggedItem[] {
  const tradeId = trade.trade_id;
  const stateChanged = () => new TradeStateChangedError(`trade ${tradeId} is no longer ${expected.join(' or ')}`);
  if (!expected.includes(trade.trade_state)) throw stateChanged();
  // States only move forward: a change back (terminated -> active, say) is a bug in its caller.
  assert(
    changes.trade_state === undefined || STATE_ORDER[changes.trade_state] >= STATE_ORDER[trade.trade_state],
    () => `trade ${tradeId}: ${trade.trade_state} -> ${changes.trade_state} moves backwards`,
  );
  const { names, values, sets, conditions, after } = changeExpression(trade, changes, nowMs);
  // What makes a duplicated or stale worker harmless: the write holds only while the trade is in the state read.
  assert(
    conditions.includes(STATE_READ_CONDITION) && values[':read'] === trade.trade_state,
    () => `trade ${tradeId}: an update not conditioned on the state it read`,
  );
  const statusChanged = after.trade_state !== trade.trade_state || after.settlement_state !== trade.settlement_state;
  if (statusChanged) numberStatusChange(trade, after, { names, values, sets, conditions });
  // A trade that stays open is next due a session from now; a terminated one leaves the open-trades index.
  let remove = '';
  if (changes.trade_state === 'terminated') {
    const removal = tradeEntity.indexRemoval('gsi2');
    Object.assign(names, removal.names);
    remove = ` REMOVE ${removal.expression}`;
  } else {
    const due = tradeEntity.indexAssignment('gsi2', {
      shard: shardOf(tradeId),
      due_ms: dueAfterStepMs(nowMs, ctx.config.SETTLEMENT_SESSION_SECONDS),
      trade_id: tradeId,
    });
    Object.assign(names, due.names);
    Object.assign(values, due.values);
    sets.push(due.expression);
  }
  const moves = changes.trade_state !== undefined && changes.trade_state !== trade.trade_state;
  const countsOf = (platform: string) =>
    moves ? tradeStateMove(platform, trade.trade_state, changes.trade_state!) : [];
  const update: TaggedItem = {
    item: tradeEntity.update(
      ctx.tables,
      { trade_id: tradeId },
      { update: `SET ${sets.join(', ')}${remove}`, condition: conditions.join(' AND '), names, values },
    ),
    onConditionFailed: stateChanged,
    counts: countsOf(trade.platform_code),
  };
  const events = statusChanged ? tradeStatusEvents(ctx, after, trade.trade_state, nowMs) : [];
  // The fields the trade's update sets, set alike on its entries: field by field, as on the trade, so two changes
  // committed one after the other leave an entry as they leave the trade.
  const copied = [
    ...(Object.keys(changes) as Array<keyof TradeChanges>).filter((field) => changes[field] !== undefined),
    'last_update' as const,
    ...(statusChanged ? (['status_sequence'] as const) : []),
  ];
  const entries = otherPlatforms(trade).map(
    (platform): TaggedItem => ({
      item: listEntryUpdate(ctx, after, platform, copied),
      counts: countsOf(platform),
    }),
  );
  return [update, ...entries, ...events];
}

const STATE_READ_CONDITION = '#trade_state = :read';
const STATE_ORDER: Record<TradeState, number> = { accepted: 0, active: 1, terminated: 2 };

/** A trade update's parts, joined once every step has added to them. */
interface TradeUpdateExpression {
  names: Record<string, string>;
  values: Record<string, unknown>;
  sets: string[];
  conditions: string[];
}

/** The update setting each field `changes` gives and `last_update`, on the condition that the state is the one read; `after` is the trade it leaves. */
function changeExpression(
  trade: Trade,
  changes: TradeChanges,
  nowMs: number,
): TradeUpdateExpression & { after: Trade } {
  const names: Record<string, string> = { '#trade_state': 'trade_state' };
  const values: Record<string, unknown> = { ':now': nowMs, ':read': trade.trade_state };
  const sets = ['last_update = :now'];
  const conditions = ['attribute_exists(pk)', STATE_READ_CONDITION];
  const after: Trade = { ...trade, last_update: nowMs };
  for (const [field, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    sets.push(`#${field} = :${field}`);
    (after as unknown as Record<string, unknown>)[field] = value;
  }
  return { names, values, sets, conditions, after };
}

/**
 * A status change takes the next `status_sequence` (its events' number), on the condition that the number is
 * still the one read, so two runs can't number their events alike.
 */
function numberStatusChange(trade: Trade, after: Trade, { names, values, sets, conditions }: TradeUpdateExpression) {
  after.status_sequence = trade.status_sequence + 1;
  names['#status_sequence'] = 'status_sequence';
  values[':next_sequence'] = after.status_sequence;
  sets.push('#status_sequence = :next_sequence');
  values[':read_sequence'] = trade.status_sequence;
  // Read as 1 it may be a version 1 trade without one (the parse reads its absence as 1): still without, or
  // given 1 by migration 0002 since.
  conditions.push(
    trade.status_sequence === 1
      ? '(attribute_not_exists(#status_sequence) OR #status_sequence = :read_sequence)'
      : '#status_sequence = :read_sequence',
  );
}

/** Another platform's list entry of the trade: the fields a change set on the trade, set to what they are after it. */
function listEntryUpdate(
  ctx: Pick<AppContext, 'tables'>,
  after: Trade,
  platformCode: string,
  fields: ReadonlyArray<keyof TradeChanges | 'last_update' | 'status_sequence'>,
): TaggedItem['item'] {
  return tradeVisibilityEntity.update(
    ctx.tables,
    { trade_id: after.trade_id, platform_code: platformCode },
    {
      update: `SET ${fields.map((field) => `#${field} = :${field}`).join(', ')}`,
      names: Object.fromEntries(fields.map((field) => [`#${field}`, field])),
      values: Object.fromEntries(fields.map((field) => [`:${field}`, after[field]])),
    },
  );
}

/**
 * Applies `tradeUpdateItems` on its own. When the trade moved meanwhile to another of the `expected` states
 * (a concurrent activation), or another run changed its settlement state, it is applied to the trade as it
 * is now; false once the trade has left them.
 */
export async function updateTrade(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'config' | 'retry'>,
  trade: Trade,
  expected: readonly TradeState[],
  changes: TradeChanges,
  nowMs: number,
): Promise<boolean> {
  let current: Trade | undefined = trade;
  // States only move forward (accepted, active, terminated), and a lost race on the status sequence leaves the
  // trade in a state this change then applies to (or leaves alone), so a few rounds settle any race.
  for (let round = 0; round < 5 && current && expected.includes(current.trade_state); round++) {
    try {
      await transactWrite(ctx, tradeUpdateItems(ctx, current, expected, changes, nowMs));
      return true;
    } catch (error) {
      if (!(error instanceof TradeStateChangedError)) throw error;
      current = await getTrade(ctx, trade.trade_id, { consistent: true });
    }
  }
  return false;
}
