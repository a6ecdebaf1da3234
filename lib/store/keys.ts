/**
 * Every key format of both tables, in one place. Nothing outside `lib/store/` builds a key.
 * The chart of entities and access patterns is in `lib/store/README.md`.
 */
export const keys = {
  platform: (platformCode: string) => ({ pk: `PLATFORM#${platformCode}`, sk: 'PLATFORM' }),

  /** gsi1: a platform's participants (its own participant and its customers), newest last. */
  participantsOfPlatform: (platformCode: string) => `PLATFORM#${platformCode}#PARTICIPANTS`,

  account: (account: { participant_code: string; account_group: string; account_label: string; asset: string }) => ({
    pk: `ACCOUNT#${account.participant_code}#${account.account_group}#${account.account_label}#${account.asset}`,
    sk: 'ACCOUNT',
  }),
  /**
   * One shard of an account whose balance is spread over several items (the liquidity provider's and the
   * external boundary's: see lib/store/README.md "Hot items"); its balance is the sum of its shards. Each shard is its
   * own partition, so the shards share no partition's write limit.
   */
  accountShard: (
    account: { participant_code: string; account_group: string; account_label: string; asset: string },
    shard: number,
  ) => ({
    pk: `ACCOUNT#${account.participant_code}#${account.account_group}#${account.account_label}#${account.asset}#SHARD#${shard}`,
    sk: 'ACCOUNT',
  }),
  /** gsi1: a platform's accounts and its customers' accounts. */
  accountsOfPlatform: (platformCode: string) => `PLATFORM#${platformCode}#ACCOUNTS`,
  accountSortKey: (account: {
    participant_code: string;
    account_group: string;
    account_label: string;
    asset: string;
  }) => `${account.participant_code}#${account.account_group}#${account.account_label}#${account.asset}`,

  /** The sort-key prefix of the accounts whose leading parts (owner, then group, then label) are given. */
  accountSortKeyPrefix: (leadingParts: readonly string[]) => leadingParts.map((part) => `${part}#`).join(''),

  /** gsi2: an account found by its stable id (a name-based UUID of its four parts, see `accountIdOf`). */
  accountById: (accountId: string) => `ACCOUNTID#${accountId}`,
  accountByIdSortKey: () => 'ACCOUNT',

  movement: (movementId: string) => ({ pk: `MOVEMENT#${movementId}`, sk: 'MOVEMENT' }),
  /** A movement's list entry for a second platform whose accounts it touches (the record carries the first's). */
  movementEntry: (movementId: string, platformCode: string) => ({
    pk: `MOVEMENT#${movementId}`,
    sk: `PLATFORM#${platformCode}`,
  }),
  /** gsi1: the movements on a platform's and its customers' accounts, by time. */
  movementsOfPlatform: (platformCode: string) => `PLATFORM#${platformCode}#MOVEMENTS`,
  movementSortKey: (createdAtMs: number, movementId: string) =>
    `${String(createdAtMs).padStart(15, '0')}#${movementId}`,
  /** A movement's entry for one platform or customer account it changes (GET /accounts/{account_id}/movements). */
  movementAccountEntry: (movementId: string, accountId: string) => ({
    pk: `MOVEMENT#${movementId}`,
    sk: `ACCOUNT#${accountId}`,
  }),
  /** gsi1: the movements that changed one account, by time (sort key `movementSortKey`). */
  movementsOfAccount: (accountId: string) => `ACCOUNT#${accountId}#MOVEMENTS`,

  /**
   * A hot account's booking queue (group commit), lib/store/README.md "Hot accounts": its committer's lease
   * (`LEASE`) here, and the queue over shards (`bookingQueueShard`) holding `Q#<booking id>` entries waiting
   * and `R#<booking id>` their results.
   */
  bookingQueue: (accountKey: string) => `BOOKINGS#${accountKey}`,
  bookingQueueShard: (accountKey: string, shard: number) => `BOOKINGS#${accountKey}#Q${shard}`,

  transfer: (transferId: number | string) => ({ pk: `TRANSFER#${transferId}`, sk: 'TRANSFER' }),
  /** The copy of a transfer listed for the platform whose participant it debits (`transferViewItem`). */
  transferView: (transferId: number | string, platformCode: string) => ({
    pk: `TRANSFER#${transferId}`,
    sk: `VIEW#${platformCode}`,
  }),
  /** gsi1: a platform's transfers, oldest first. */
  transfersOfPlatform: (platformCode: string) => `PLATFORM#${platformCode}#TRANSFERS`,
  transferSortKey: (createdAtMs: number, transferId: number | string) =>
    `${String(createdAtMs).padStart(15, '0')}#${transferId}`,

  /** A reported or executed trade. Its partition also holds visibility pointers and settlement history. */
  trade: (tradeId: string) => ({ pk: `TRADE#${tradeId}`, sk: 'TRADE' }),
  /** A trade shown to a platform other than the reporter (a party's platform); lists through gsi1. */
  tradeVisibility: (tradeId: string, platformCode: string) => ({
    pk: `TRADE#${tradeId}`,
    sk: `VISIBLE#${platformCode}`,
  }),
  /** gsi1: the trades a platform sees, by transaction time. */
  tradesOfPlatform: (platformCode: string) => `PLATFORM#${platformCode}#TRADES`,
  tradeSortKey: (transactionTimestampMs: number, tradeId: string) =>
    `${String(transactionTimestampMs).padStart(15, '0')}#${tradeId}`,
  /**
   * gsi2, sparse: trades not yet terminated, by the time their settlement is next due (the sweep reads those
   * past due; the local runner resumes them all). Spread over a few partitions so a burst of reports doesn't
   * make one index partition hot.
   */
  openTrades: (shard: number) => `TRADES#OPEN#${shard}`,
  openTradeSortKey: (dueAtMs: number, tradeId: string) => `${String(dueAtMs).padStart(15, '0')}#${tradeId}`,
  /** The greatest sort key of a trade due at `dueAtMs` ('~' sorts after every trade id character). */
  openTradesDueBy: (dueAtMs: number) => `${String(dueAtMs).padStart(15, '0')}#~`,
  /** One run of a trade's settlement workflow (local runner), and the events it went through, in order. */
  settlementExecution: (tradeId: string, executionId: string) => ({
    pk: `TRADE#${tradeId}`,
    sk: `EXECUTION#${executionId}`,
  }),
  settlementExecutionEvent: (tradeId: string, executionId: string, sequence: number) => ({
    pk: `TRADE#${tradeId}`,
    sk: `EXECUTION#${executionId}#EVENT#${String(sequence).padStart(6, '0')}`,
  }),
  settlementExecutionsPrefix: () => 'EXECUTION#',
  /** gsi2, sparse: local settlement executions still RUNNING, so a crashed process's runs are found and closed. */
  runningExecutions: () => 'EXECUTIONS#RUNNING',
  runningExecutionSortKey: (startedAtMs: number, tradeId: string, executionId: string) =>
    `${String(startedAtMs).padStart(15, '0')}#${tradeId}#${executionId}`,

  /** The reference price of a pair (set by ops or a feed); one item per pair, overwritten in place. */
  price: (underlying: string, quotedCurrency: string) => ({ pk: `PRICE#${underlying}#${quotedCurrency}`, sk: 'PRICE' }),

  /** A quote from an RFQ; read by id only, executed once. */
  quote: (quoteId: string) => ({ pk: `QUOTE#${quoteId}`, sk: 'QUOTE' }),

  /** An ACH payment transaction. */
  payment: (transactionId: string) => ({ pk: `PAYMENT#${transactionId}`, sk: 'PAYMENT' }),
  /** gsi1: a platform's payments, by creation time (the date filters of GET /payments/status are key ranges). */
  paymentsOfPlatform: (platformCode: string) => `PLATFORM#${platformCode}#PAYMENTS`,
  paymentSortKey: (createdAtMs: number, transactionId: string) =>
    `${String(createdAtMs).padStart(15, '0')}#${transactionId}`,

  /**
   * An award distribution, keyed by the request that made it (its X-Request-Id, else a new id) so a retry
   * finds it. Its chunks share the partition: one Query reads the whole distribution and its progress.
   */
  awardDistribution: (platformCode: string, distributionId: string) => ({
    pk: `AWARDS#${platformCode}#${distributionId}`,
    sk: 'DISTRIBUTION',
  }),
  awardDistributionChunk: (platformCode: string, distributionId: string, index: number) => ({
    pk: `AWARDS#${platformCode}#${distributionId}`,
    sk: `CHUNK#${String(index).padStart(4, '0')}`,
  }),
  awardDistributionPartition: (platformCode: string, distributionId: string) =>
    `AWARDS#${platformCode}#${distributionId}`,
  /** gsi2, sparse: distributions not yet completed, for ops to find and resume one whose client gave up. */
  openAwardDistributions: () => 'AWARDS#OPEN',
  openAwardDistributionSortKey: (createdAtMs: number, platformCode: string, distributionId: string) =>
    `${String(createdAtMs).padStart(15, '0')}#${platformCode}#${distributionId}`,

  /** A withdrawal request (convert-withdraw), moved by custody events. */
  withdrawal: (withdrawalId: string) => ({ pk: `WITHDRAWAL#${withdrawalId}`, sk: 'WITHDRAWAL' }),
  /** gsi1: a platform's withdrawal requests, by creation time. */
  withdrawalsOfPlatform: (platformCode: string) => `PLATFORM#${platformCode}#WITHDRAWALS`,
  withdrawalSortKey: (createdAtMs: number, withdrawalId: string) =>
    `${String(createdAtMs).padStart(15, '0')}#${withdrawalId}`,

  /** The network fee charged on withdrawals of an asset (ops set it); one item per asset. */
  networkFee: (asset: string) => ({ pk: `NETWORK_FEE#${asset}`, sk: 'NETWORK_FEE' }),

  /** A list's counter (see counters.ts): one partition per counter, one item per shard. */
  counter: (platformCode: string, list: string, bucket: string) => `COUNT#${platformCode}#${list}#${bucket}`,
  counterShard: (platformCode: string, list: string, bucket: string, shard: number) => ({
    pk: `COUNT#${platformCode}#${list}#${bucket}`,
    sk: `SHARD#${shard}`,
  }),

  /**
   * An event: recorded in the transaction of the change it describes, kept 30 days.
   * Its deliveries and their attempts share its partition.
   */
  event: (eventId: string) => ({ pk: `EVENT#${eventId}`, sk: 'EVENT' }),
  /** gsi1: a platform's events, oldest first (GET /events). */
  eventsOfPlatform: (platformCode: string) => `PLATFORM#${platformCode}#EVENTS`,
  /** gsi2: a platform's events of one type (GET /events?type=). */
  eventsOfPlatformByType: (platformCode: string, eventType: string) => `PLATFORM#${platformCode}#EVENTS#${eventType}`,
  eventSortKey: (createdAtMs: number, eventId: string) => `${String(createdAtMs).padStart(15, '0')}#${eventId}`,
  /** One delivery of an event to one endpoint: written once by the dispatcher, claimed per attempt. */
  webhookDelivery: (eventId: string, endpointId: string) => ({ pk: `EVENT#${eventId}`, sk: `DELIVERY#${endpointId}` }),
  /** One attempt of a delivery, kept for the endpoint's attempt log. */
  webhookAttempt: (eventId: string, endpointId: string, attempt: number) => ({
    pk: `EVENT#${eventId}`,
    sk: `ATTEMPT#${endpointId}#${String(attempt).padStart(4, '0')}`,
  }),
  /** gsi1: an endpoint's attempts, oldest first. */
  attemptsOfEndpoint: (endpointId: string) => `WEBHOOK_ENDPOINT#${endpointId}#ATTEMPTS`,
  attemptSortKey: (attemptedAtMs: number, eventId: string, attempt: number) =>
    `${String(attemptedAtMs).padStart(15, '0')}#${eventId}#${String(attempt).padStart(4, '0')}`,
  /**
   * gsi3, sparse: webhook work that falls due (an event not yet dispatched, a delivery's next try), spread
   * over a few partitions because every event lands here once. The scheduled sweep drains it.
   */
  webhooksDue: (shard: number) => `WEBHOOKS#DUE#${shard}`,
  webhooksDueSortKey: (dueAtMs: number, what: string) => `${String(dueAtMs).padStart(15, '0')}#${what}`,
  /** A platform's webhook endpoint; the platform's partition holds all of them (at most 20). */
  webhookEndpoint: (platformCode: string, endpointId: string) => ({
    pk: `PLATFORM#${platformCode}`,
    sk: `WEBHOOK_ENDPOINT#${endpointId}`,
  }),
  webhookEndpointPrefix: () => 'WEBHOOK_ENDPOINT#',
  /** How many endpoints a platform has, moved in the transaction that creates or deletes one. */
  webhookEndpointCount: (platformCode: string) => ({ pk: `PLATFORM#${platformCode}`, sk: 'WEBHOOK_ENDPOINT_COUNT' }),
} as const;

/** Keys of the TTL table: claims that expire. */
export const ttlKeys = {
  /** A signature accepted for a mutating request; seeing it again inside the window is a replay. */
  replay: (signature: string) => `REPLAY#${signature}`,
  /** An `X-Request-Id` seen on a POST of this platform. */
  idempotency: (platformCode: string, requestId: string) => `IDEMPOTENCY#${platformCode}#${requestId}`,
  /** An API key's request count in one sustained rate-limit window (`lib/domain/rate-limits.ts`), by the window's first second. */
  rateWindow: (apiKey: string, windowStart: number) => `RATE#${apiKey}#${windowStart}`,
  /** A client-chosen id that must be unique per platform for a window (client_transfer_id, client_trade_id). */
  clientId: (kind: string, platformCode: string, clientId: string) => `CLIENTID#${kind}#${platformCode}#${clientId}`,
} as const;
