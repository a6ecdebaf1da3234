import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { AppContext } from '../context.js';
import { ACH_CLEARING_LABEL } from '../domain/ach-clearing.js';
import { accountKey, isUnguarded } from '../domain/ledger.js';
import { readCount, ALL } from './table/counters.js';
import { eventEntity } from './entities/event.js';
import { participantEntity } from './entities/participant.js';
import { counterShardEntity } from './entities/counter.js';
import { parseAccount } from './ledger.js';
import { withRetry } from './table/retry.js';
import { StoredItemError } from './entity/entity.js';
import { accountEntity, movementAccountEntryEntity, movementEntity, type StoredAccount } from './entities/ledger.js';
import { transferEntity } from './entities/transfer.js';

/**
 * The ledger as the reconciliation reads it: a segmented parallel scan of the main table
 * whose items are turned into small facts (`LedgerFact`), so nothing outside `lib/store/` reads a key format;
 * plus the targeted reads that recheck one account or one counter after the scan. Never on a request path.
 */

/** One scan page: the facts of its items and where the segment goes on (undefined: the segment is done). */
interface ScanPage {
  facts: LedgerFact[];
  next: Record<string, unknown> | undefined;
  /** Items the page read, and how many were ledger items (the rest were filtered out by DynamoDB). */
  scanned: number;
}

/** Decimal amounts stay text here; the checker reads them as Money. */
export type LedgerFact =
  | {
      kind: 'account';
      /** `participant#group#label#asset`: the account as bookings name it (shards share it). */
      accountKey: string;
      accountId: string;
      asset: string;
      platformCode: string | null;
      balance: string;
      /** Absent on accounts written before balance events numbered their changes. */
      version: number | null;
      movementCount: number | null;
      lastUpdateMs: number;
      /** One shard of an outside-world balance (or another system account): no entries, events or count of its own. */
      system: boolean;
      /**
       * Whether the account may stand below zero (docs/ledger.md): the outside world's accounts (liquidity
       * provider, external boundary) and a platform's own ACH clearing account (through bank events). Every
       * other account, escrow and fees included, is guarded and never below zero.
       */
      mayBeNegative: boolean;
      /** Counters whose count includes this item (an opened platform account counts in `accounts`). */
      counts: CounterRef[];
    }
  | { kind: 'entry'; accountId: string; platformCode: string; movementId: string; change: string; createdAtMs: number }
  | {
      kind: 'movement';
      movementId: string;
      platformCodes: string[];
      legs: { accountKey: string; asset: string; amount: string }[];
      counts: CounterRef[];
    }
  | {
      kind: 'balance_event';
      eventId: string;
      accountId: string;
      platformCode: string;
      sequence: number;
      balance: string;
      change: string;
      movementId: string;
      createdAtMs: number;
    }
  | {
      kind: 'counter';
      counter: string;
      platformCode: string;
      list: string;
      bucket: string;
      n: number;
      checkable: boolean;
    }
  | { kind: 'record'; platformCode: string; counts: CounterRef[] }
  /** An item that doesn't parse as its entity; `platformCode` when the item names one. */
  | { kind: 'unreadable'; entity: string; key: string; problems: readonly string[]; platformCode: string | null };

/** A checked counter a record counts in: its key (as printed) and what it counts. */
export interface CounterRef {
  counter: string;
  platformCode: string;
  list: string;
}

/** The lists whose `all` counter the scan can check: it sees every record they count (lib/store/README.md "Counters"). */
const CHECKED_LISTS = ['transfers', 'movements', 'accounts', 'participants'] as const;
type CheckedList = (typeof CHECKED_LISTS)[number];

const counterOf = (platformCode: string, list: CheckedList): CounterRef => ({
  counter: counterShardEntity.partitionKey({ platform_code: platformCode, list, bucket: ALL }),
  platformCode,
  list,
});

/** The item types the check reads; everything else is filtered out by DynamoDB (still read, not sent). */
const LEDGER_TYPES = ['account', 'movement', 'movement_account_entry', 'counter', 'transfer', 'participant'] as const;

interface ScanSegmentRequest {
  segment: number;
  totalSegments: number;
  startKey?: Record<string, unknown>;
  /** Items per page (DynamoDB's 1 MB page when unset). */
  pageSize?: number;
}

/**
 * One page of one segment of the main table, eventually consistent (half the read units of a strongly
 * consistent scan: a booking racing the scan is found by its `last_update` and rechecked, see
 * lib/reconciliation/ledger-check.ts).
 */
export async function scanLedgerPage(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  request: ScanSegmentRequest,
): Promise<ScanPage> {
  const values = Object.fromEntries(LEDGER_TYPES.map((type, i) => [`:t${i}`, type]));
  const out = await withRetry(ctx, { what: 'ledger scan page' }, () =>
    ctx.db.send(
      new ScanCommand({
        TableName: ctx.tables.main,
        Segment: request.segment,
        TotalSegments: request.totalSegments,
        ExclusiveStartKey: request.startKey,
        Limit: request.pageSize,
        // Of the events, only balance changes (their type is in the body only).
        FilterExpression: `#type IN (${Object.keys(values).join(', ')}) OR (#type = :event AND contains(body, :balanceEvent))`,
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: {
          ...values,
          ':event': 'event',
          ':balanceEvent': '"type":"account_balance.changed"',
        },
      }),
    ),
  );
  const facts: LedgerFact[] = [];
  for (const item of out.Items ?? []) {
    const fact = factOf(item);
    if (fact) facts.push(fact);
  }
  return { facts, next: out.LastEvaluatedKey, scanned: out.ScannedCount ?? 0 };
}

/**
 * What one stored item tells the check, or undefined for an item it doesn't read. An item that doesn't parse
 * as its entity is a fact of its own (`unreadable`), so one broken item is reported, not the whole check lost.
 */
function factOf(item: Readonly<Record<string, unknown>>): LedgerFact | undefined {
  try {
    return readFact(item);
  } catch (error) {
    if (!(error instanceof StoredItemError)) throw error;
    return {
      kind: 'unreadable',
      entity: error.entity,
      key: error.key,
      problems: error.problems,
      platformCode: typeof item.platform_code === 'string' ? item.platform_code : null,
    };
  }
}

function readFact(item: Readonly<Record<string, unknown>>): LedgerFact | undefined {
  switch (item.type) {
    case accountEntity.type:
      return accountFact(item);
    case movementAccountEntryEntity.type: {
      const entry = movementAccountEntryEntity.parse(item);
      return {
        kind: 'entry',
        accountId: entry.account_id,
        platformCode: entry.platform_code,
        movementId: entry.movement_id,
        change: entry.change,
        createdAtMs: entry.created_at,
      };
    }
    case movementEntity.type:
      return movementFact(item);
    case eventEntity.type:
      return balanceEventFact(eventEntity.parse(item).body);
    case counterShardEntity.type:
      return counterFact(item);
    case transferEntity.type: {
      // The record or a grant's copy: either is listed (and counted) for its `platform_code`.
      const { platform_code } = transferEntity.parse(item);
      return { kind: 'record', platformCode: platform_code, counts: [counterOf(platform_code, 'transfers')] };
    }
    case participantEntity.type: {
      const { platform_code } = participantEntity.parse(item);
      return platform_code !== ''
        ? { kind: 'record', platformCode: platform_code, counts: [counterOf(platform_code, 'participants')] }
        : undefined;
    }
    default:
      return undefined;
  }
}

/** An account: its balance, version and movement count; a platform account counts in its platform's accounts. */
function accountFact(item: Readonly<Record<string, unknown>>): LedgerFact {
  const account = parseAccount(item);
  const platformCode = account.platform_code ?? null;
  return {
    kind: 'account',
    accountKey: accountKey(account),
    accountId: account.account_id,
    asset: account.asset,
    platformCode,
    balance: account.balance,
    // null: no booking has numbered it (from before versions), so the check can't replay it.
    version: account.version === 0 ? null : account.version,
    movementCount: account.movement_count,
    lastUpdateMs: account.last_update,
    system: platformCode === null,
    mayBeNegative: mayBeNegative(account),
    counts: platformCode === null ? [] : [counterOf(platformCode, 'accounts')],
  };
}

/**
 * The accounts exempt from the guard: the outside world's (their debits are never guarded, lib/ledger),
 * and a platform's ACH clearing account, which is the platform's own participant's (a platform's participant
 * code is its platform code), in its platform's group, labelled `ach_clearing`: a customer's account with that
 * label is guarded like any other.
 */
function mayBeNegative(account: StoredAccount): boolean {
  if (isUnguarded(account.participant_code)) return true;
  return (
    account.account_label === ACH_CLEARING_LABEL &&
    account.platform_code !== undefined &&
    account.participant_code === account.platform_code &&
    account.account_group === account.platform_code
  );
}

/** A movement record: its legs, and the platforms whose movements count it. */
function movementFact(item: Readonly<Record<string, unknown>>): LedgerFact {
  const movement = movementEntity.parse(item);
  const legs = movement.legs.map((leg) => ({ accountKey: accountKey(leg), asset: leg.asset, amount: leg.amount }));
  const platformCodes = [
    ...new Set(movement.legs.map((leg) => leg.platform_code).filter((code): code is string => !!code)),
  ];
  return {
    kind: 'movement',
    movementId: movement.movement_id,
    platformCodes,
    legs,
    counts: platformCodes.map((code) => counterOf(code, 'movements')),
  };
}

/** A counter shard, named by its key (`COUNT#<platform>#<list>#<bucket>`): checkable when it is the `all` total of a list the check counts itself. */
function counterFact(item: Readonly<Record<string, unknown>>): LedgerFact {
  const { n } = counterShardEntity.parse(item);
  const [, platformCode = '', list = '', ...bucket] = String(item.pk).split('#');
  const joined = bucket.join('#');
  return {
    kind: 'counter',
    counter: String(item.pk),
    platformCode,
    list,
    bucket: joined,
    n: n ?? 0,
    checkable: joined === ALL && (CHECKED_LISTS as readonly string[]).includes(list),
  };
}

/** The parts of an `account_balance.changed` event's envelope the check reads. */
interface BalanceEventEnvelope {
  id?: string;
  type?: string;
  platform_code?: string;
  sequence?: number | string;
  created_at?: number | string;
  resource?: { id?: string };
  data?: {
    account_id?: string;
    balance?: string;
    movement?: { change?: string; movement_id?: string };
  };
}

function balanceEventFact(body: string): LedgerFact | undefined {
  const envelope = JSON.parse(body) as BalanceEventEnvelope;
  if (envelope.type !== 'account_balance.changed') return undefined;
  const data = envelope.data ?? {};
  return {
    kind: 'balance_event',
    eventId: envelope.id as string,
    accountId: (data.account_id ?? envelope.resource?.id) as string,
    platformCode: envelope.platform_code as string,
    sequence: Number(envelope.sequence),
    balance: String(data.balance),
    change: String(data.movement?.change),
    movementId: String(data.movement?.movement_id),
    createdAtMs: Number(envelope.created_at),
  };
}

/** Fails (with the SDK's error) when the main table can't be reached or doesn't exist; reads nothing else. */
export async function describeMainTable(
  ctx: Pick<AppContext, 'db' | 'tables'>,
): Promise<{ itemCount: number; sizeBytes: number }> {
  const out = await ctx.db.send(new DescribeTableCommand({ TableName: ctx.tables.main }));
  return { itemCount: out.Table?.ItemCount ?? 0, sizeBytes: out.Table?.TableSizeBytes ?? 0 };
}

/**
 * One platform or customer account as it is now: its item (strongly consistent) and its movement entries
 * (the account's movements index, eventually consistent on AWS). Undefined when no account has the id.
 */
export async function readAccountNow(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  accountId: string,
): Promise<{ account: LedgerFact & { kind: 'account' }; entries: (LedgerFact & { kind: 'entry' })[] } | undefined> {
  const found = await ctx.db.send(
    new QueryCommand({
      ...accountEntity.query(ctx.tables, 'gsi2', accountEntity.indexPartition('gsi2', { account_id: accountId })),
      Limit: 1,
    }),
  );
  const indexed = found.Items?.[0];
  if (!indexed) return undefined;
  const out = await ctx.db.send(
    new GetCommand(accountEntity.get(ctx.tables, accountEntity.parse(indexed), { consistent: true })),
  );
  if (!out.Item) return undefined;
  const entries: (LedgerFact & { kind: 'entry' })[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await withRetry(ctx, { what: 'account entries' }, () =>
      ctx.db.send(
        new QueryCommand({
          ...movementAccountEntryEntity.query(
            ctx.tables,
            'gsi1',
            movementAccountEntryEntity.indexPartition('gsi1', { account_id: accountId }),
          ),
          ExclusiveStartKey: startKey,
        }),
      ),
    );
    for (const item of page.Items ?? []) {
      const fact = readFact(item);
      if (fact?.kind === 'entry') entries.push(fact);
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return { account: accountFact(out.Item) as LedgerFact & { kind: 'account' }, entries };
}

/**
 * An account's `account_balance.changed` events since `sinceMs`: a Query of its platform's balance events
 * (the type's gsi2 partition, by time) filtered to the account. It reads every balance event of the platform
 * in the window, so the check makes it only for an account it must recheck.
 */
export async function readAccountEvents(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  platformCode: string,
  accountId: string,
  sinceMs: number,
): Promise<(LedgerFact & { kind: 'balance_event' })[]> {
  const events: (LedgerFact & { kind: 'balance_event' })[] = [];
  // The platform's balance events from `sinceMs` on ('~' sorts after every time-led sort key).
  const eventsQuery = eventEntity.query(
    ctx.tables,
    'gsi2',
    eventEntity.indexPartition('gsi2', { platform_code: platformCode, event_type: 'account_balance.changed' }),
    { between: [eventEntity.indexSortPrefix('gsi2', { created_ms: Math.max(0, sinceMs) }), '~'] },
  );
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await withRetry(ctx, { what: 'account balance events' }, () =>
      ctx.db.send(
        new QueryCommand({
          ...eventsQuery,
          FilterExpression: 'resource_id = :id',
          ExpressionAttributeValues: { ...eventsQuery.ExpressionAttributeValues, ':id': accountId },
          ExclusiveStartKey: startKey,
        }),
      ),
    );
    for (const item of page.Items ?? []) {
      const fact = readFact(item);
      if (fact?.kind === 'balance_event') events.push(fact);
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return events;
}

/** The gsi1 partition each checked list's records are listed in (its count is the counter's expected value). */
const LIST_PARTITIONS: Record<CheckedList, (platformCode: string) => string> = {
  transfers: (platform_code) => transferEntity.indexPartition('gsi1', { platform_code }),
  movements: (platform_code) => movementEntity.indexPartition('gsi1', { platform_code }),
  accounts: (platform_code) => accountEntity.indexPartition('gsi1', { platform_code }),
  participants: (platform_code) => participantEntity.indexPartition('gsi1', { platform_code }),
};

/**
 * A checked counter and the records it counts, as they are now: the counter, a COUNT Query of the list's
 * index partition, and the counter again; `stable` when the counter didn't move in between.
 */
export async function readCounterNow(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  platformCode: string,
  list: string,
): Promise<{ counted: number; records: number; stable: boolean } | undefined> {
  if (!(CHECKED_LISTS as readonly string[]).includes(list)) return undefined;
  const before = await readCount(ctx, platformCode, list);
  let records = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await withRetry(ctx, { what: 'list record count' }, () =>
      ctx.db.send(
        new QueryCommand({
          // Any entity listed on gsi1 names the index's attributes; the partition is the list's.
          ...accountEntity.query(ctx.tables, 'gsi1', LIST_PARTITIONS[list as CheckedList](platformCode)),
          Select: 'COUNT',
          ExclusiveStartKey: startKey,
        }),
      ),
    );
    records += page.Count ?? 0;
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  const after = await readCount(ctx, platformCode, list);
  return { counted: after, records, stable: before === after };
}
