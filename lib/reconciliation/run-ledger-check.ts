import type { AppContext } from '../context.js';
import { EVENT_RETENTION_MS } from '../domain/events.js';
import {
  describeMainTable,
  readAccountEvents,
  readAccountNow,
  readCounterNow,
  scanLedgerPage,
} from '../store/ledger-scan.js';
import {
  accountDiscrepancies,
  addFact,
  counterDiscrepancy,
  deserializeAggregates,
  findDiscrepancies,
  newAggregates,
  serializeAggregates,
  type SerializedAggregates,
  singleAccount,
  type CheckScope,
  type Discrepancy,
  type LedgerAggregates,
} from './ledger-check.js';

/**
 * Runs the ledger check over the main table: a segmented parallel scan folded into the
 * aggregates of ledger-check.ts, checkpointed page by page when a checkpoint store is given, then the
 * comparison, then a recheck of each account or counter found off by targeted reads of it as it is now.
 *
 * A scan is not a snapshot: a booking committing while it runs can be seen on one item and not on another.
 * Every booking sets `last_update` on the accounts it changes (its entries and events carry the same time), so
 * an account whose `last_update` is older than the scan's start (less a margin for clocks) was still during
 * the scan, and what the scan saw of it is exact. An account that moved is reread (its item strongly
 * consistent, its entries from its index) and compared again; its events are then not conclusive ("unsettled").
 * A counter is reread around a count of its list's index. An asset's sum is conclusive only when none of its
 * accounts moved during the scan.
 */

/** Clock difference allowed between the hosts that book and the one that checks. */
const MOVED_MARGIN_MS = 60_000;
/** Accounts and counters rechecked at most per run; the rest are reported as the scan saw them. */
const RECHECK_LIMIT = 200;
// 2: accounts carry whether they may stand below zero (a format-1 checkpoint would take every one as guarded).
const CHECKPOINT_FORMAT = 2;

/** Where a resumable run keeps its progress (the CLI: a file). */
export interface CheckpointStore {
  load(): Promise<unknown | undefined>;
  save(state: unknown): Promise<void>;
}

interface LedgerCheckRequest {
  scope: CheckScope;
  totalSegments: number;
  /** Items per scan page (DynamoDB's 1 MB page when unset). */
  pageSize?: number;
  checkpoint?: CheckpointStore;
  /** Stops the scan between pages (the progress is saved first); the report is then incomplete. */
  signal?: AbortSignal;
  /** Saves the checkpoint at most this often while scanning (every segment's end is saved too). */
  checkpointEveryMs?: number;
}

export interface Unsettled {
  kind: string;
  asset?: string;
  account_id?: string;
  counter?: string;
  detail: string;
}

export interface LedgerCheckReport {
  table: string;
  scope: CheckScope;
  complete: boolean;
  clean: boolean;
  discrepancies: Discrepancy[];
  unsettled: Unsettled[];
  summary: {
    discrepancies: number;
    unsettled: number;
    items_scanned: number;
    ledger_items: number;
    accounts_checked: number;
    legacy_accounts: number;
    system_account_items: number;
    movement_entries: number;
    movements_checked: number;
    balance_events: number;
    counters_checked: number;
    counters_unchecked: number;
    assets_summed: number;
    rechecked: number;
    segments: number;
    pages: number;
    resumed: boolean;
    scan_started_at: string;
    elapsed_ms: number;
  };
}

/** The table can't be read (unreachable, wrong name, no permission): nothing was checked or written. */
export class LedgerUnreachableError extends Error {
  override readonly name = 'LedgerUnreachableError';
}
/** The checkpoint belongs to another run (another table, scope or segment count), or is not one. */
export class CheckpointMismatchError extends Error {
  override readonly name = 'CheckpointMismatchError';
}

interface ScanState {
  format: number;
  table: string;
  scope: CheckScope;
  totalSegments: number;
  scanStartMs: number;
  segments: { next: Record<string, unknown> | null; done: boolean }[];
  pages: number;
  itemsScanned: number;
  completed: boolean;
  /** Undefined until the first checkpoint. */
  aggregates: SerializedAggregates | undefined;
}

/** Fails before anything is read or written when the table can't be described. */
async function assertReachable(ctx: AppContext): Promise<void> {
  try {
    await describeMainTable(ctx);
  } catch (error) {
    throw new LedgerUnreachableError(
      `cannot read table ${ctx.tables.main}: ${(error as Error).name}: ${(error as Error).message}`,
    );
  }
}

interface Checkpoints {
  /** Saves the state as it is now (saves run one after another); a no-op without a checkpoint store. */
  save(): Promise<void>;
  /** Saves when a segment has just finished or the last save is `checkpointEveryMs` old, without waiting. */
  saveIfDue(segmentDone: boolean): void;
}

function checkpoints(
  ctx: AppContext,
  request: LedgerCheckRequest,
  state: ScanState,
  agg: LedgerAggregates,
  pages: { count: number },
): Checkpoints {
  let lastSaveMs = ctx.clock.nowMs();
  let saving: Promise<void> = Promise.resolve();
  const save = () => {
    if (!request.checkpoint) return saving;
    // Taken now, synchronously: the aggregates hold exactly the pages before each segment's `next`.
    const snapshot = { ...state, pages: pages.count, aggregates: serializeAggregates(agg) };
    const checkpoint = request.checkpoint;
    saving = saving.then(() => checkpoint.save(snapshot));
    lastSaveMs = ctx.clock.nowMs();
    return saving;
  };
  return {
    save,
    saveIfDue: (segmentDone) => {
      if (segmentDone || ctx.clock.nowMs() - lastSaveMs >= (request.checkpointEveryMs ?? 2000)) void save();
    },
  };
}

/** Scans every unfinished segment in parallel, page by page, folding each page into the aggregates. */
async function scanSegments(
  ctx: AppContext,
  request: LedgerCheckRequest,
  state: ScanState,
  agg: LedgerAggregates,
  pages: { count: number },
  saves: Checkpoints,
): Promise<void> {
  await Promise.all(
    state.segments.map(async (segment, index) => {
      while (!segment.done && !request.signal?.aborted) {
        const page = await scanLedgerPage(ctx, {
          segment: index,
          totalSegments: state.totalSegments,
          startKey: segment.next ?? undefined,
          pageSize: request.pageSize,
        });
        for (const fact of page.facts) addFact(agg, fact);
        state.itemsScanned += page.scanned;
        pages.count += 1;
        segment.next = page.next ?? null;
        segment.done = page.next === undefined;
        saves.saveIfDue(segment.done);
      }
    }),
  );
}

/** A finished scan's comparison, each account or counter found off then rechecked as it is now. */
async function scanFindings(
  ctx: AppContext,
  state: ScanState,
  agg: LedgerAggregates,
): Promise<{ discrepancies: Discrepancy[]; total: number; unsettled: Unsettled[]; legacy: number; rechecked: number }> {
  const movedSinceMs = state.scanStartMs - MOVED_MARGIN_MS;
  const findings = findDiscrepancies(agg, movedSinceMs);
  const unsettled: Unsettled[] = findings.unsettledSums.map(({ asset, sum }) => ({
    kind: 'asset_sum',
    asset,
    detail: `${asset}: balances summed to ${sum} while bookings of ${asset} ran during the scan (not conclusive; run on a quiet table)`,
  }));
  const rechecked = await recheck(ctx, agg, findings.discrepancies, movedSinceMs, unsettled);
  return {
    discrepancies: rechecked.discrepancies,
    total: findings.total - findings.discrepancies.length + rechecked.discrepancies.length,
    unsettled,
    legacy: findings.legacyAccounts,
    rechecked: rechecked.count,
  };
}

export async function runLedgerCheck(ctx: AppContext, request: LedgerCheckRequest): Promise<LedgerCheckReport> {
  const startedMs = ctx.clock.nowMs();
  await assertReachable(ctx);
  const { state, agg, resumed } = await startOrResume(ctx, request);
  const pages = { count: state.pages };
  const saves = checkpoints(ctx, request, state, agg, pages);
  await scanSegments(ctx, request, state, agg, pages, saves);

  const complete = state.segments.every((segment) => segment.done);
  if (!complete) {
    await saves.save();
    return reportOf(ctx, state, agg, {
      complete,
      resumed,
      pages: pages.count,
      startedMs,
      discrepancies: [],
      total: 0,
      unsettled: [],
      legacy: 0,
      rechecked: 0,
    });
  }
  const findings = await scanFindings(ctx, state, agg);
  state.completed = true;
  await saves.save();
  return reportOf(ctx, state, agg, { complete, resumed, pages: pages.count, startedMs, ...findings });
}

async function startOrResume(
  ctx: AppContext,
  request: LedgerCheckRequest,
): Promise<{ state: ScanState; agg: LedgerAggregates; resumed: boolean }> {
  if (!Number.isInteger(request.totalSegments) || request.totalSegments < 1 || request.totalSegments > 1_000_000)
    throw new RangeError('totalSegments: 1 to 1,000,000');
  const saved = (await request.checkpoint?.load()) as ScanState | undefined;
  if (saved !== undefined && !saved.completed) {
    if (saved.format !== CHECKPOINT_FORMAT || !Array.isArray(saved.segments))
      throw new CheckpointMismatchError('the resume file is not a ledger check checkpoint');
    const mismatch = [
      saved.table !== ctx.tables.main && `table ${saved.table}`,
      (saved.scope.platformCode ?? null) !== (request.scope.platformCode ?? null) &&
        `scope ${saved.scope.platformCode ?? 'all platforms'}`,
      saved.totalSegments !== request.totalSegments && `${saved.totalSegments} segments`,
    ].filter(Boolean);
    if (mismatch.length > 0)
      throw new CheckpointMismatchError(
        `the resume file is a run with ${mismatch.join(', ')}: resume it with the same options, or use another file`,
      );
    if (saved.aggregates === undefined)
      throw new CheckpointMismatchError('the resume file is not a ledger check checkpoint');
    return { state: saved, agg: deserializeAggregates(saved.aggregates), resumed: true };
  }
  const scanStartMs = ctx.clock.nowMs();
  const state: ScanState = {
    format: CHECKPOINT_FORMAT,
    table: ctx.tables.main,
    scope: request.scope,
    totalSegments: request.totalSegments,
    scanStartMs,
    segments: Array.from({ length: request.totalSegments }, () => ({ next: null, done: false })),
    pages: 0,
    itemsScanned: 0,
    completed: false,
    aggregates: undefined,
  };
  return { state, agg: newAggregates(request.scope, { scanStartMs, retentionMs: EVENT_RETENTION_MS }), resumed: false };
}

/**
 * Rereads each account and counter the scan found off (up to RECHECK_LIMIT of them): what holds now was a
 * booking racing the scan; what is still off is confirmed. Other discrepancies (movements, asset sums the
 * scan could conclude on) stand as found.
 */
async function recheck(
  ctx: AppContext,
  agg: LedgerAggregates,
  found: Discrepancy[],
  movedSinceMs: number,
  unsettled: Unsettled[],
): Promise<{ discrepancies: Discrepancy[]; count: number }> {
  const confirmed: Discrepancy[] = [];
  const accounts = new Map<string, Discrepancy[]>();
  const counters: Discrepancy[] = [];
  for (const discrepancy of found) {
    if (discrepancy.account_id)
      accounts.set(discrepancy.account_id, [...(accounts.get(discrepancy.account_id) ?? []), discrepancy]);
    else if (discrepancy.kind === 'counter') counters.push(discrepancy);
    else confirmed.push(discrepancy);
  }
  let count = 0;
  for (const [accountId, seen] of accounts) {
    if (count >= RECHECK_LIMIT) {
      confirmed.push(...seen);
      continue;
    }
    count += 1;
    confirmed.push(...(await recheckAccount(ctx, agg, accountId, seen, movedSinceMs, unsettled)));
  }
  for (const discrepancy of counters) {
    if (count >= RECHECK_LIMIT || !discrepancy.platform_code || !discrepancy.list) {
      confirmed.push(discrepancy);
      continue;
    }
    count += 1;
    let settled = false;
    for (let attempt = 0; attempt < 3 && !settled; attempt += 1) {
      const now = await readCounterNow(ctx, discrepancy.platform_code, discrepancy.list);
      if (!now || !now.stable) continue;
      settled = true;
      if (now.counted !== now.records)
        confirmed.push(
          counterDiscrepancy(
            discrepancy.counter!,
            discrepancy.platform_code,
            discrepancy.list,
            now.counted,
            now.records,
          ),
        );
    }
    if (!settled)
      unsettled.push({
        kind: 'counter',
        counter: discrepancy.counter,
        detail: `${discrepancy.detail} (the counter kept moving while rechecked: not conclusive)`,
      });
  }
  return { discrepancies: confirmed, count };
}

/**
 * One account found off, reread. Not moved since before the scan: the scan saw it exactly, and what it found
 * stands (its balance and count confirmed on the fresh read). Moved: its item, entries and events are read
 * again, until the account's version is the same before and after the reads (3 tries); still off then is
 * confirmed, never settled is reported as unsettled.
 */
async function recheckAccount(
  ctx: AppContext,
  agg: LedgerAggregates,
  accountId: string,
  seen: Discrepancy[],
  movedSinceMs: number,
  unsettled: Unsettled[],
): Promise<Discrepancy[]> {
  const scanned = agg.accounts.get(accountId);
  const eventsSeen = seen.some((discrepancy) => discrepancy.kind === 'balance_events');
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const now = await readAccountNow(ctx, accountId);
    if (!now) return seen;
    const moved = now.account.lastUpdateMs >= movedSinceMs || scanned?.item?.version !== now.account.version;
    const events =
      eventsSeen && moved
        ? await readAccountEvents(
            ctx,
            now.account.platformCode!,
            accountId,
            agg.options.scanStartMs - agg.options.retentionMs,
          )
        : [];
    const fresh = singleAccount([now.account, ...now.entries, ...events], agg.options);
    if (!fresh) return seen;
    if (!moved) {
      return [
        ...accountDiscrepancies(accountId, fresh.account, { events: false }),
        ...seen.filter((discrepancy) => discrepancy.kind === 'balance_events'),
      ];
    }
    const after = await readAccountNow(ctx, accountId);
    if (after?.account.version === now.account.version)
      return accountDiscrepancies(accountId, fresh.account, { events: eventsSeen });
  }
  unsettled.push(
    ...seen.map((discrepancy) => ({
      kind: discrepancy.kind,
      account_id: accountId,
      detail: `${discrepancy.detail} (the account kept moving while rechecked: not conclusive)`,
    })),
  );
  return [];
}

function reportOf(
  ctx: AppContext,
  state: ScanState,
  agg: LedgerAggregates,
  run: {
    complete: boolean;
    resumed: boolean;
    pages: number;
    startedMs: number;
    discrepancies: Discrepancy[];
    total: number;
    unsettled: Unsettled[];
    legacy: number;
    rechecked: number;
  },
): LedgerCheckReport {
  const { stats } = agg;
  return {
    table: state.table,
    scope: state.scope,
    complete: run.complete,
    clean: run.complete && run.total === 0,
    discrepancies: run.discrepancies,
    unsettled: run.unsettled,
    summary: {
      discrepancies: run.total,
      unsettled: run.unsettled.length,
      items_scanned: state.itemsScanned,
      ledger_items: stats.items,
      accounts_checked: stats.accounts,
      legacy_accounts: run.legacy,
      system_account_items: stats.systemAccountItems,
      movement_entries: stats.entries,
      movements_checked: stats.movements,
      balance_events: stats.balanceEvents,
      counters_checked: agg.counters.size,
      counters_unchecked: stats.uncheckedCounters,
      assets_summed: agg.assets.size,
      rechecked: run.rechecked,
      segments: state.totalSegments,
      pages: run.pages,
      resumed: run.resumed,
      scan_started_at: new Date(state.scanStartMs).toISOString(),
      elapsed_ms: ctx.clock.nowMs() - run.startedMs,
    },
  };
}
