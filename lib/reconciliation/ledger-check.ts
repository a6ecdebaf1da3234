import { createHash } from 'node:crypto';
import { Money, plain } from '../domain/money.js';
import type { CounterRef, LedgerFact } from '../store/ledger-scan.js';

/**
 * The ledger check's arithmetic, pure: facts from a scan (lib/store/ledger-scan.ts) are
 * folded into per-account, per-asset and per-counter aggregates of fixed size, never kept as items, and the
 * aggregates are compared once the scan is done. The invariants are the booking engine's:
 *
 * - per asset, every account balance (system accounts and shards included) sums to zero;
 * - a platform or customer account's balance is the sum of its movement entries' changes, and its `version`
 *   and `movement_count` their number;
 * - every movement's legs sum to zero per asset;
 * - the account's `account_balance.changed` events are numbered 1..version without gap or repeat, each
 *   carries its movement's entry change, and their balances are the running sum of the changes. Events
 *   expire after 30 days: an entry and its event share the booking's time, so entries older than the
 *   retention cutoff are set aside with their events, and the retained events must then start right after
 *   them, from the balance those older entries sum to;
 * - each checked list counter (its shards summed) equals the records the scan found for it;
 * - no guarded account stands below zero: every account but the outside world's (liquidity provider,
 *   external boundary) and a platform's own ACH clearing account (docs/ledger.md). Escrow and fees, which
 *   belong to no platform, are checked in unscoped runs; a platform's and its customers' accounts in its
 *   scoped runs too.
 *
 * Order-free, so segments may feed facts in any order: the events' sequences are checked by count, sum and
 * sum of squares over min..max, and the running balance by 64-bit fingerprints (sums of hashes): the set of
 * (sequence, balance after) pairs must equal the set of (sequence - 1, balance before) pairs shifted by one,
 * apart from the two ends, which are compared outright.
 */

export interface CheckScope {
  /** Only this platform's accounts, their entries and events, its movements and its counters; no global sum. */
  platformCode?: string;
}

export interface CheckOptions {
  /** When the scan started: entries and events older than `scanStartMs - retentionMs` are past retention. */
  scanStartMs: number;
  /** How long events are kept (lib/domain/events.ts EVENT_RETENTION_MS). */
  retentionMs: number;
}

export type DiscrepancyKind =
  | 'asset_sum'
  | 'account_balance'
  | 'account_version'
  | 'account_movement_count'
  | 'account_missing'
  | 'balance_events'
  | 'movement_unbalanced'
  | 'negative_balance'
  | 'counter'
  | 'unreadable_item';

export interface Discrepancy {
  kind: DiscrepancyKind;
  account_id?: string;
  movement_id?: string;
  counter?: string;
  list?: string;
  asset?: string;
  platform_code?: string;
  /** An item that doesn't parse: its entity (stored type) and key. */
  entity?: string;
  key?: string;
  expected: string;
  found: string;
  detail: string;
}

const MASK = (1n << 64n) - 1n;

/** A 64-bit hash of the parts, as a bigint; the fingerprints are sums of these modulo 2^64. */
function fingerprintOf(...parts: (string | number)[]): bigint {
  return createHash('sha256').update(parts.join('\u0000')).digest().readBigUInt64BE(0);
}

const addPrint = (sum: bigint, value: bigint) => (sum + value) & MASK;
const subPrint = (sum: bigint, value: bigint) => (sum - value + (1n << 64n)) & MASK;
const money = (text: string) => plain(new Money(text));

export interface AccountAggregate {
  platformCode: string;
  /** From the account item (absent until the scan reaches it). */
  item?: {
    balance: Money;
    version: number | null;
    movementCount: number | null;
    lastUpdateMs: number;
    /** Exempt from the guard: may stand below zero. */
    mayBeNegative?: boolean;
  };
  entries: number;
  entrySum: Money;
  oldEntries: number;
  oldEntrySum: Money;
  /** Sum of fingerprint(movement, change) of entries within retention. */
  entryPrint: bigint;
  events: number;
  minSeq: number;
  maxSeq: number;
  seqSum: bigint;
  seqSquares: bigint;
  eventPrint: bigint;
  /** Sum of fingerprint(sequence, balance after) and of fingerprint(sequence - 1, balance before). */
  afterPrint: bigint;
  beforePrint: bigint;
  balanceAtMax?: Money;
  balanceBeforeMin?: Money;
}

export interface LedgerAggregates {
  scope: CheckScope;
  options: CheckOptions;
  accounts: Map<string, AccountAggregate>;
  /** Per asset: the balances' sum, and the newest change of any of its account items. */
  assets: Map<string, { sum: Money; lastUpdateMs: number; items: number }>;
  counters: Map<string, { platformCode: string; list: string; n: number }>;
  /** What the scan found that each checked counter counts. */
  counted: Map<string, { platformCode: string; list: string; n: number }>;
  /** Found while folding (a movement is checked on its own); capped, with the total kept. */
  immediate: Discrepancy[];
  immediateTotal: number;
  stats: {
    items: number;
    accounts: number;
    systemAccountItems: number;
    entries: number;
    movements: number;
    balanceEvents: number;
    counters: number;
    uncheckedCounters: number;
  };
}

/** At most this many discrepancies are kept and printed; the summary counts them all. */
const MAX_REPORTED = 1000;

export function newAggregates(scope: CheckScope, options: CheckOptions): LedgerAggregates {
  return {
    scope,
    options,
    accounts: new Map(),
    assets: new Map(),
    counters: new Map(),
    counted: new Map(),
    immediate: [],
    immediateTotal: 0,
    stats: {
      items: 0,
      accounts: 0,
      systemAccountItems: 0,
      entries: 0,
      movements: 0,
      balanceEvents: 0,
      counters: 0,
      uncheckedCounters: 0,
    },
  };
}

function accountOf(agg: LedgerAggregates, accountId: string, platformCode: string): AccountAggregate {
  let account = agg.accounts.get(accountId);
  if (!account) {
    account = {
      platformCode,
      entries: 0,
      entrySum: new Money(0),
      oldEntries: 0,
      oldEntrySum: new Money(0),
      entryPrint: 0n,
      events: 0,
      minSeq: Number.POSITIVE_INFINITY,
      maxSeq: 0,
      seqSum: 0n,
      seqSquares: 0n,
      eventPrint: 0n,
      afterPrint: 0n,
      beforePrint: 0n,
    };
    agg.accounts.set(accountId, account);
  }
  return account;
}

const inScope = (agg: LedgerAggregates, platformCode: string | null) =>
  agg.scope.platformCode === undefined || agg.scope.platformCode === platformCode;
const cutoffOf = (options: CheckOptions) => options.scanStartMs - options.retentionMs;

function report(agg: LedgerAggregates, discrepancy: Discrepancy): void {
  agg.immediateTotal += 1;
  if (agg.immediate.length < MAX_REPORTED) agg.immediate.push(discrepancy);
}

function countRecord(agg: LedgerAggregates, counters: readonly CounterRef[]): void {
  for (const { counter, platformCode, list } of counters) {
    if (!inScope(agg, platformCode)) continue;
    const seen = agg.counted.get(counter) ?? { platformCode, list, n: 0 };
    seen.n += 1;
    agg.counted.set(counter, seen);
  }
}

type FactOf<K extends LedgerFact['kind']> = Extract<LedgerFact, { kind: K }>;

/** An account item: into its asset's global sum (unscoped checks only), and as the account's own item. */
function addAccountFact(agg: LedgerAggregates, fact: FactOf<'account'>): void {
  if (agg.scope.platformCode === undefined) {
    const asset = agg.assets.get(fact.asset) ?? { sum: new Money(0), lastUpdateMs: 0, items: 0 };
    asset.sum = asset.sum.plus(fact.balance);
    asset.lastUpdateMs = Math.max(asset.lastUpdateMs, fact.lastUpdateMs);
    asset.items += 1;
    agg.assets.set(fact.asset, asset);
  }
  if (fact.system) {
    agg.stats.systemAccountItems += 1;
    // A guarded system account (escrow, fees) has no aggregate of its own: its sign is checked here.
    if (agg.scope.platformCode === undefined && !fact.mayBeNegative && new Money(fact.balance).lt(0))
      report(agg, negativeBalance(fact.accountId, null, fact.balance, fact.accountKey));
    return;
  }
  if (!inScope(agg, fact.platformCode)) return;
  agg.stats.accounts += 1;
  accountOf(agg, fact.accountId, fact.platformCode!).item = {
    balance: new Money(fact.balance),
    version: fact.version,
    movementCount: fact.movementCount,
    lastUpdateMs: fact.lastUpdateMs,
    mayBeNegative: fact.mayBeNegative,
  };
  countRecord(agg, fact.counts);
}

/** A movement entry: into its account's sum, set aside with the old ones when past retention. */
function addEntryFact(agg: LedgerAggregates, fact: FactOf<'entry'>): void {
  if (!inScope(agg, fact.platformCode)) return;
  agg.stats.entries += 1;
  const account = accountOf(agg, fact.accountId, fact.platformCode);
  account.entries += 1;
  account.entrySum = account.entrySum.plus(fact.change);
  if (fact.createdAtMs < cutoffOf(agg.options)) {
    account.oldEntries += 1;
    account.oldEntrySum = account.oldEntrySum.plus(fact.change);
  } else account.entryPrint = addPrint(account.entryPrint, fingerprintOf(fact.movementId, money(fact.change)));
}

/** A balance event: its sequence and balances into the account's counts, sums and fingerprints. */
function addBalanceEventFact(agg: LedgerAggregates, fact: FactOf<'balance_event'>): void {
  // Past retention: set aside, as its entry is (a TTL deletion may not have come yet).
  if (!inScope(agg, fact.platformCode) || fact.createdAtMs < cutoffOf(agg.options)) return;
  agg.stats.balanceEvents += 1;
  const account = accountOf(agg, fact.accountId, fact.platformCode);
  const after = new Money(fact.balance);
  const before = after.minus(fact.change);
  account.events += 1;
  account.seqSum += BigInt(fact.sequence);
  account.seqSquares += BigInt(fact.sequence) ** 2n;
  account.eventPrint = addPrint(account.eventPrint, fingerprintOf(fact.movementId, money(fact.change)));
  account.afterPrint = addPrint(account.afterPrint, fingerprintOf(fact.sequence, plain(after)));
  account.beforePrint = addPrint(account.beforePrint, fingerprintOf(fact.sequence - 1, plain(before)));
  if (fact.sequence > account.maxSeq) {
    account.maxSeq = fact.sequence;
    account.balanceAtMax = after;
  }
  if (fact.sequence < account.minSeq) {
    account.minSeq = fact.sequence;
    account.balanceBeforeMin = before;
  }
}

/** A movement: checked on its own, its legs summing to zero per asset. */
function addMovementFact(agg: LedgerAggregates, fact: FactOf<'movement'>): void {
  if (agg.scope.platformCode !== undefined && !fact.platformCodes.includes(agg.scope.platformCode)) return;
  agg.stats.movements += 1;
  const sums = new Map<string, Money>();
  for (const leg of fact.legs) sums.set(leg.asset, (sums.get(leg.asset) ?? new Money(0)).plus(leg.amount));
  for (const [asset, sum] of sums) {
    if (!sum.isZero()) {
      report(agg, {
        kind: 'movement_unbalanced',
        movement_id: fact.movementId,
        asset,
        expected: '0',
        found: plain(sum),
        detail: `movement ${fact.movementId}: its ${asset} legs sum to ${plain(sum)}, not 0`,
      });
    }
  }
  countRecord(agg, fact.counts);
}

/** A list counter's shard: into its counter's total, unless the counter can't be checked. */
function addCounterFact(agg: LedgerAggregates, fact: FactOf<'counter'>): void {
  if (!inScope(agg, fact.platformCode)) return;
  agg.stats.counters += 1;
  if (!fact.checkable) {
    agg.stats.uncheckedCounters += 1;
    return;
  }
  const counter = agg.counters.get(fact.counter) ?? { platformCode: fact.platformCode, list: fact.list, n: 0 };
  counter.n += fact.n;
  agg.counters.set(fact.counter, counter);
}

/** Folds one fact into the aggregates (facts outside the scope are dropped). */
export function addFact(agg: LedgerAggregates, fact: LedgerFact): void {
  agg.stats.items += 1;
  switch (fact.kind) {
    case 'account':
      return addAccountFact(agg, fact);
    case 'entry':
      return addEntryFact(agg, fact);
    case 'balance_event':
      return addBalanceEventFact(agg, fact);
    case 'movement':
      return addMovementFact(agg, fact);
    case 'counter':
      return addCounterFact(agg, fact);
    case 'record':
      if (inScope(agg, fact.platformCode)) countRecord(agg, fact.counts);
      return;
    case 'unreadable':
      return addUnreadableFact(agg, fact);
  }
}

/**
 * An item the check can't read (it doesn't parse as its entity): a discrepancy naming it, not a failed check,
 * so the rest of the ledger is still checked. Reported in a scoped run when the item names that platform, or
 * no platform at all.
 */
function addUnreadableFact(agg: LedgerAggregates, fact: FactOf<'unreadable'>): void {
  if (fact.platformCode !== null && !inScope(agg, fact.platformCode)) return;
  report(agg, {
    kind: 'unreadable_item',
    entity: fact.entity,
    key: fact.key,
    ...(fact.platformCode !== null && { platform_code: fact.platformCode }),
    expected: `a readable ${fact.entity}`,
    found: fact.problems.join('; '),
    detail: `${fact.entity} ${fact.key} does not parse: ${fact.problems.join('; ')}`,
  });
}

/** What the aggregates hold for one account, compared: its discrepancies (empty when it holds). */
export function accountDiscrepancies(
  accountId: string,
  account: AccountAggregate,
  options: { events?: boolean } = {},
): Discrepancy[] {
  const ids = { account_id: accountId, platform_code: account.platformCode };
  const item = account.item;
  if (!item) {
    return [
      {
        kind: 'account_missing',
        ...ids,
        expected: 'an account item',
        found: `none, with ${account.entries} movement entries and ${account.events} balance events`,
        detail: `account ${accountId}: entries or events without the account`,
      },
    ];
  }
  const found: Discrepancy[] = [];
  // Whatever its history, a guarded account below zero is wrong: a debit went through that its guard refuses.
  if (!item.mayBeNegative && item.balance.lt(0))
    found.push(negativeBalance(accountId, account.platformCode, plain(item.balance)));
  // Written before accounts carried a version: its history predates the entries too (see isLegacy).
  if (isLegacy(account)) return found;
  if (!item.balance.eq(account.entrySum)) {
    found.push({
      kind: 'account_balance',
      ...ids,
      expected: plain(account.entrySum),
      found: plain(item.balance),
      detail: `account ${accountId}: balance ${plain(item.balance)} but its ${account.entries} movement entries sum to ${plain(account.entrySum)}`,
    });
  }
  if (item.version !== account.entries) {
    found.push({
      kind: 'account_version',
      ...ids,
      expected: String(account.entries),
      found: String(item.version),
      detail: `account ${accountId}: version ${item.version} but ${account.entries} movement entries`,
    });
  }
  if ((item.movementCount ?? 0) !== account.entries) {
    found.push({
      kind: 'account_movement_count',
      ...ids,
      expected: String(account.entries),
      found: String(item.movementCount ?? 0),
      detail: `account ${accountId}: movement_count ${item.movementCount ?? 0} but ${account.entries} movement entries`,
    });
  }
  const events = options.events === false ? [] : eventProblems(account);
  if (events.length > 0) {
    found.push({
      kind: 'balance_events',
      ...ids,
      expected: events[0]!.expected,
      found: events[0]!.found,
      detail: `account ${accountId}: ${events.map((problem) => problem.what).join('; ')}`,
    });
  }
  return found;
}

function negativeBalance(
  accountId: string,
  platformCode: string | null,
  balance: string,
  accountKey?: string,
): Discrepancy {
  return {
    kind: 'negative_balance',
    account_id: accountId,
    ...(platformCode !== null && { platform_code: platformCode }),
    expected: '>= 0',
    found: balance,
    detail: `account ${accountId}${accountKey ? ` (${accountKey})` : ''}: balance ${balance}, but it is guarded and never below zero`,
  };
}

/** An account no booking has numbered: written before versions (and entries) existed, so it can't be replayed. */
function isLegacy(account: AccountAggregate): boolean {
  return account.item !== undefined && account.item.version === null;
}

type EventProblem = { what: string; expected: string; found: string };

/** Whether the events' sequences are exactly minSeq..maxSeq, each once: by count, sum and sum of squares. */
function consecutiveSequences(account: AccountAggregate): boolean {
  const { minSeq, maxSeq } = account;
  const sumOf = (n: bigint) => (n * (n + 1n)) / 2n;
  const squaresOf = (n: bigint) => (n * (n + 1n) * (2n * n + 1n)) / 6n;
  const [lo, hi] = [BigInt(minSeq - 1), BigInt(maxSeq)];
  return (
    account.events === maxSeq - minSeq + 1 &&
    account.seqSum === sumOf(hi) - sumOf(lo) &&
    account.seqSquares === squaresOf(hi) - squaresOf(lo)
  );
}

/** The events' numbering against the account's version and its entries within retention. */
function sequenceProblems(account: AccountAggregate, consecutive: boolean, recent: number): EventProblem[] {
  const { minSeq, maxSeq } = account;
  const version = account.item!.version ?? 0;
  const problems: EventProblem[] = [];
  if (!consecutive)
    problems.push({
      what: `event sequences ${minSeq}..${maxSeq} are not consecutive and unique (${account.events} events)`,
      expected: `${maxSeq - minSeq + 1} events ${minSeq}..${maxSeq}`,
      found: `${account.events} events`,
    });
  if (maxSeq !== version)
    problems.push({
      what: `latest event sequence ${maxSeq}, version ${version}`,
      expected: String(version),
      found: String(maxSeq),
    });
  if (minSeq - 1 !== account.oldEntries) {
    problems.push({
      what: `events start at ${minSeq} but ${account.oldEntries} movements are past retention`,
      expected: String(account.oldEntries + 1),
      found: String(minSeq),
    });
  }
  if (account.events !== recent)
    problems.push({
      what: `${account.events} events for ${recent} movements within retention`,
      expected: String(recent),
      found: String(account.events),
    });
  else if (account.eventPrint !== account.entryPrint)
    problems.push({
      what: "the events' movements and changes differ from its movement entries",
      expected: 'the entries',
      found: 'other movements or changes',
    });
  return problems;
}

/** The events' balances: both ends against the account and its old entries, and the running sum between. */
function balanceProblems(account: AccountAggregate, consecutive: boolean): EventProblem[] {
  const { minSeq, maxSeq } = account;
  const balance = account.item!.balance;
  const problems: EventProblem[] = [];
  if (account.balanceAtMax && !account.balanceAtMax.eq(balance)) {
    problems.push({
      what: `event ${maxSeq} says balance ${plain(account.balanceAtMax)}, the account holds ${plain(balance)}`,
      expected: plain(balance),
      found: plain(account.balanceAtMax),
    });
  }
  if (account.balanceBeforeMin && !account.balanceBeforeMin.eq(account.oldEntrySum)) {
    problems.push({
      what: `event ${minSeq} starts from ${plain(account.balanceBeforeMin)}, the movements before it sum to ${plain(account.oldEntrySum)}`,
      expected: plain(account.oldEntrySum),
      found: plain(account.balanceBeforeMin),
    });
  }
  if (consecutive && account.balanceAtMax && account.balanceBeforeMin) {
    // Each event's balance before is the previous one's balance after: the chain, with its two ends removed.
    const inner = subPrint(account.afterPrint, fingerprintOf(maxSeq, plain(account.balanceAtMax)));
    const chained = subPrint(account.beforePrint, fingerprintOf(minSeq - 1, plain(account.balanceBeforeMin)));
    if (inner !== chained)
      problems.push({
        what: 'an event balance is not the previous balance plus its change',
        expected: 'a running sum',
        found: 'a break',
      });
  }
  return problems;
}

function eventProblems(account: AccountAggregate): EventProblem[] {
  const recent = account.entries - account.oldEntries;
  if (account.events === 0) {
    return recent > 0
      ? [
          {
            what: `no account_balance.changed events for its ${recent} movements within retention`,
            expected: `${recent} events`,
            found: '0 events',
          },
        ]
      : [];
  }
  const consecutive = consecutiveSequences(account);
  return [...sequenceProblems(account, consecutive, recent), ...balanceProblems(account, consecutive)];
}

interface CheckFindings {
  /** Confirmed as far as the aggregates go; accounts and counters among them may still be rechecked. */
  discrepancies: Discrepancy[];
  total: number;
  /** Asset sums that are off while an account of the asset changed during the scan: not conclusive. */
  unsettledSums: { asset: string; sum: string }[];
  legacyAccounts: number;
}

/** Compares the aggregates once the scan is done. `movedSinceMs`: an item changed after this moved during the scan. */
export function findDiscrepancies(agg: LedgerAggregates, movedSinceMs: number): CheckFindings {
  const discrepancies = [...agg.immediate];
  let total = agg.immediateTotal;
  const add = (found: Discrepancy) => {
    total += 1;
    if (discrepancies.length < MAX_REPORTED) discrepancies.push(found);
  };
  const unsettledSums: { asset: string; sum: string }[] = [];
  for (const [asset, { sum, lastUpdateMs }] of agg.assets) {
    if (sum.isZero()) continue;
    if (lastUpdateMs >= movedSinceMs) unsettledSums.push({ asset, sum: plain(sum) });
    else
      add({
        kind: 'asset_sum',
        asset,
        expected: '0',
        found: plain(sum),
        detail: `${asset}: all balances sum to ${plain(sum)}, not 0`,
      });
  }
  let legacyAccounts = 0;
  for (const [accountId, account] of agg.accounts) {
    if (isLegacy(account)) legacyAccounts += 1;
    for (const found of accountDiscrepancies(accountId, account)) add(found);
  }
  for (const found of counterDiscrepancies(agg)) add(found);
  return { discrepancies, total, unsettledSums, legacyAccounts };
}

function counterDiscrepancies(agg: LedgerAggregates): Discrepancy[] {
  const found: Discrepancy[] = [];
  for (const counter of new Set([...agg.counters.keys(), ...agg.counted.keys()])) {
    const meta = (agg.counters.get(counter) ?? agg.counted.get(counter))!;
    const n = agg.counters.get(counter)?.n ?? 0;
    const records = agg.counted.get(counter)?.n ?? 0;
    if (n !== records) found.push(counterDiscrepancy(counter, meta.platformCode, meta.list, n, records));
  }
  return found;
}

export function counterDiscrepancy(
  counter: string,
  platformCode: string,
  list: string,
  n: number,
  records: number,
): Discrepancy {
  return {
    kind: 'counter',
    counter,
    platform_code: platformCode,
    list,
    expected: String(records),
    found: String(n),
    detail: `counter ${counter}: ${n}, but ${records} records it counts`,
  };
}

/** The account aggregate of one account alone (a recheck folds a fresh read into it). */
export function singleAccount(
  facts: readonly LedgerFact[],
  options: CheckOptions,
): { accountId: string; account: AccountAggregate } | undefined {
  const agg = newAggregates({}, options);
  for (const fact of facts) addFact(agg, fact);
  const [first] = agg.accounts;
  return first ? { accountId: first[0], account: first[1] } : undefined;
}

// Checkpoints: the aggregates as JSON (decimals as text, fingerprints as hex), so a stopped run resumes.

export function serializeAggregates(agg: LedgerAggregates) {
  const account = (a: AccountAggregate) => ({
    ...a,
    item: a.item && { ...a.item, balance: plain(a.item.balance) },
    entrySum: plain(a.entrySum),
    oldEntrySum: plain(a.oldEntrySum),
    entryPrint: a.entryPrint.toString(16),
    minSeq: Number.isFinite(a.minSeq) ? a.minSeq : null,
    seqSum: a.seqSum.toString(),
    seqSquares: a.seqSquares.toString(),
    eventPrint: a.eventPrint.toString(16),
    afterPrint: a.afterPrint.toString(16),
    beforePrint: a.beforePrint.toString(16),
    balanceAtMax: a.balanceAtMax && plain(a.balanceAtMax),
    balanceBeforeMin: a.balanceBeforeMin && plain(a.balanceBeforeMin),
  });
  return {
    scope: agg.scope,
    options: agg.options,
    accounts: [...agg.accounts].map(([id, a]): [string, ReturnType<typeof account>] => [id, account(a)]),
    assets: [...agg.assets].map(([asset, a]): [string, { sum: string; lastUpdateMs: number; items: number }] => [
      asset,
      { ...a, sum: plain(a.sum) },
    ]),
    counters: [...agg.counters],
    counted: [...agg.counted],
    immediate: agg.immediate,
    immediateTotal: agg.immediateTotal,
    stats: agg.stats,
  };
}

/** A checkpoint's aggregates, as `serializeAggregates` wrote them (read back from JSON). */
export type SerializedAggregates = ReturnType<typeof serializeAggregates>;

export function deserializeAggregates(json: SerializedAggregates): LedgerAggregates {
  const hex = (text: string) => BigInt(`0x${text}`);
  return {
    scope: json.scope,
    options: json.options,
    accounts: new Map(
      json.accounts.map(([id, a]) => [
        id,
        {
          ...a,
          item: a.item && { ...a.item, balance: new Money(a.item.balance) },
          entrySum: new Money(a.entrySum),
          oldEntrySum: new Money(a.oldEntrySum),
          entryPrint: hex(a.entryPrint),
          minSeq: a.minSeq ?? Number.POSITIVE_INFINITY,
          seqSum: BigInt(a.seqSum),
          seqSquares: BigInt(a.seqSquares),
          eventPrint: hex(a.eventPrint),
          afterPrint: hex(a.afterPrint),
          beforePrint: hex(a.beforePrint),
          balanceAtMax: a.balanceAtMax === undefined ? undefined : new Money(a.balanceAtMax),
          balanceBeforeMin: a.balanceBeforeMin === undefined ? undefined : new Money(a.balanceBeforeMin),
        },
      ]),
    ),
    assets: new Map(json.assets.map(([asset, a]) => [asset, { ...a, sum: new Money(a.sum) }])),
    counters: new Map(json.counters),
    counted: new Map(json.counted),
    immediate: json.immediate,
    immediateTotal: json.immediateTotal,
    stats: json.stats,
  };
}
