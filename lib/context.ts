import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import type { Config } from './config.js';
import type { BookingResult } from './domain/group-commit.js';
import type { AccountRef } from './domain/ledger.js';
import type { RateLimiter } from './domain/rate-limits.js';
import type { CursorKey } from './runtime/cursor-key.js';
import type { Deadlines } from './runtime/deadline.js';
import type { KmsCipher } from './runtime/kms.js';
import type { Retrying } from './runtime/retry-policy.js';
import type { SettlementWorkflow } from './runtime/settlement-workflow.js';

/**
 * Everything the service's code depends on from outside, built once at the edge and passed in as a
 * parameter (docs/decisions.md, "Shape"): the Lambda handler factory builds it from `process.env` on a
 * container's first invocation, the local runtime (`infra/local`) builds it for `npm start`, and each test
 * file builds its own (with a clock it can move, or a DynamoDB client that injects faults). No module of
 * `lib/` keeps a client, a clock or the configuration of its own.
 */
export interface AppContext {
  clock: Clock;
  /** Numbers are read as `NumberValue` (wrapNumbers) so balances never pass through a JS number. */
  db: DynamoDBDocumentClient;
  tables: Tables;
  workflow: SettlementWorkflow;
  /** Encrypts API secrets on AWS (absent when they are encrypted with the local key); loads its client on first use. */
  kms: KmsCipher | undefined;
  logger: Logger;
  /** Powertools Metrics (embedded metric format); business counts go through `lib/observability/metrics.ts`. */
  metrics: Metrics;
  /** Powertools Tracer, on Lambda with TRACING=active only; the context's SDK clients are captured by it. */
  tracer?: Tracer;
  config: Config;
  /** What this context keeps between calls for its life (a warm container's); no module of `lib/` keeps any. */
  caches: ContextCaches;
  /** The store's retry policy for conflicts and throttling, and where its pauses and jitter come from (`lib/store/table/retry.ts`). */
  retry: Retrying;
  /** The current invocation's deadline, which bounds every wait below the edge (`lib/runtime/deadline.ts`). */
  deadlines: Deadlines;
  /** Counts each API key's requests against its limit (RATE_LIMIT_COUNTER: in the table on AWS, in memory locally). */
  rateLimiter: RateLimiter;
  /** The list cursors' HMAC key: on AWS read from Secrets Manager on first use and cached; locally a local key. */
  cursorKey: CursorKey;
}

/** Values worth keeping for a context's life because they cost a call or a derivation; never state. */
export interface ContextCaches {
  /** Decrypted API secrets by their ciphertext (a KMS call each on AWS), each until `untilMs`. */
  apiSecrets: Map<string, { secret: Buffer; untilMs: number }>;
  /**
   * API key items by key, as stored and read at `readAtMs` (parsed on each use, like any item read): a safe
   * request (a GET of a route that writes nothing) may be verified against one a few seconds old
   * (`KEY_ITEM_KEPT_FOR_READS_MS`, lib/store/api-keys.ts); writes read afresh.
   */
  apiKeys: Map<string, { item: Record<string, unknown>; readAtMs: number }>;
  /**
   * Lookups whose answer never changes once found, so a read by id needs no index lookup the second time
   * (`lib/store/table/kept-lookups.ts`): an account id's parts (the id is their hash), a customer e-mail's
   * participant code (an e-mail claim is never removed or repointed). Never what they lead to: balances and
   * participants are read afresh.
   */
  accountRefs: Map<string, AccountRef>;
  customerCodes: Map<string, string>;
  /**
   * A participant's platform by its code (it never changes once the participant exists): a booking that
   * names a participant this context has read needs no read of it, its status being checked by the booking's
   * own transaction (`participantActiveChecks`).
   */
  participantPlatforms: Map<string, string>;
  /**
   * Each platform or customer account's balance and version as this context last read or committed them (by
   * `accountKey`): the cold path books on them without a read, its update conditioned on that version, and a
   * stale one fails the transaction, whose cancellation returns the account as it is (lib/ledger/engine.ts).
   */
  accountStates: Map<string, KeptAccountState>;
  /**
   * This context's bookings in flight per account (by `accountKey`): while another is, a kept state is about to
   * go stale, so a booking reads the account instead of spending a transaction on it.
   */
  bookingsInFlight: Map<string, number>;
  /** Decrypted webhook endpoint secrets by their ciphertext, each until `untilMs`. */
  webhookSecrets: Map<string, { secret: string; untilMs: number }>;
  /** Per hot account's queue, this process's waiters taking turns (lib/ledger/hot-account.ts). */
  hotAccounts: Map<string, HotAccountTurns>;
  /** Whether a migration has run (for the whole table or a platform), by `<name>#<platform>`; a yes forever, a no until `untilMs`. */
  migrations: Map<string, { applied: boolean; untilMs: number }>;
}

/**
 * An account's state as a context last saw it: its exact balance (decimal text), its version, and until when
 * it was hot (ms; a hot account's bookings go to its queue without a transaction first).
 */
export interface KeptAccountState {
  balance: string;
  version: number;
  hotUntilMs: number;
}

/**
 * This process's requests waiting on one hot account: they take turns (one asks DynamoDB at a time) and find
 * the results of the rounds this process committed here, without a read.
 */
export interface HotAccountTurns {
  turn: Promise<void>;
  waiting: number;
  /** Results the rounds of this process gave its waiting requests, until each request takes its own. */
  results: Map<string, BookingResult>;
  /** Bookings this process's requests wait for and no round has answered yet, each with when its queueing began (ms; 0 unknown). */
  waitingFor: Map<string, number>;
  /**
   * The bookings this process's requests queued, as they put them: a round of this process takes them without
   * reading their shard (a shard is read once in 8 rounds; a booking would wait for its turn).
   */
  local: Map<string, LocalQueued>;
  /** Wakes the request waiting for a booking once a round of this process has answered it. */
  wake: Map<string, () => void>;
  /** This process's last tenure gave the lease back in its last round (its next request takes it without a read). */
  releasedLast?: boolean;
  /** While this process holds the account's lease: its tenure as the committer (lib/ledger/hot-account.ts). */
  tenure?: HotAccountTenure;
}

/**
 * A process's tenure as a hot account's committer: taken with one conditional put, then held by each round's own
 * transaction (which renews the lease, or gives it back in the last round), so a round in between costs only its
 * read of one queue shard (sent alongside the round before's transaction), its read of the accounts and its
 * transaction.
 */
export interface HotAccountTenure {
  /** The lease's owner while this tenure holds it. */
  owner: string;
  /** When the lease was taken (ms, after the put answered): what was queued before, this tenure answers. */
  startedMs: number;
  /** Until when the lease is held, as the last write of it set it (ms). */
  untilMs: number;
  /** Queue entries read and not yet answered, by shard, as the shard's last read found them (oldest first). */
  queued: Map<number, QueuedEntry[]>;
  /** Shards whose last read stopped at its limit (more may wait behind), with the newest entry it read (queued at, ms). */
  fullShards: Map<number, number>;
  /** The shard the next round reads. */
  nextShard: number;
  /** The next round reads every shard: the tenure's first, or one after a round whose outcome is unknown. */
  readAll: boolean;
  /** The shard the next round would read was read alongside the last round's transaction. */
  prefetched: boolean;
  /**
   * Accounts other than the queue's whose condition failed a round (a booking outside the queue moved them
   * between the round's read and its transaction): their bookings and the others take rounds in turn, so one
   * busy account does not hold up the whole queue.
   */
  contended: Set<string>;
  /** Whether the next round is the turn of the bookings on contended accounts. */
  contendedTurn: boolean;
  /** Rounds in a row whose transaction failed (logged). */
  failedRounds: number;
}

/** A booking this process queued: its queue shard and its entry. */
export interface LocalQueued {
  shard: number;
  entry: QueuedEntry;
}

/** A queue entry as a committer read it: the booking's id, when it was queued (ms) and the booking as stored. */
export interface QueuedEntry {
  id: string;
  queuedAtMs: number;
  booking: string;
}

/** The service's notion of now. Everything that compares against time reads it from the context. */
export interface Clock {
  nowMs(): number;
  nowSeconds(): number;
}

export interface Tables {
  main: string;
  ttl: string;
}

export const systemClock: Clock = {
  nowMs: () => Date.now(),
  nowSeconds: () => Math.floor(Date.now() / 1000),
};
