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
  movement: (movementId: string) => ({ pk: `MOVEMENT#${movementId}`, sk: 'MOVEMENT' }),
  /** A movement's entry for one platform or customer account it changes (GET /accounts/{account_id}/movements). */
  movementAccountEntry: (movementId: string, accountId: string) => ({
    pk: `MOVEMENT#${movementId}`,
    sk: `ACCOUNT#${accountId}`,
  }),
  /** gsi1: the movements that changed one account, by time. */
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

  /**
   * An award distribution, keyed by the request that made it (its X-Request-Id, else a new id) so a retry
   * finds it. Its chunks share the partition: one Query reads the whole distribution and its progress.
   */
  awardDistribution: (platformCode: string, distributionId: string) => ({
    pk: `AWARDS#${platformCode}#${distributionId}`,
    sk: 'DISTRIBUTION',
  }),

  /** A list's counter (see counters.ts): one partition per counter, one item per shard. */
  counter: (platformCode: string, list: string, bucket: string) => `COUNT#${platformCode}#${list}#${bucket}`,
  counterShard: (platformCode: string, list: string, bucket: string, shard: number) => ({
    pk: `COUNT#${platformCode}#${list}#${bucket}`,
    sk: `SHARD#${shard}`,
  }),

  /** gsi2: a platform's events of one type (the ledger check's balance events; entities/event.ts defines the event). */
  eventsOfPlatformByType: (platformCode: string, eventType: string) => `PLATFORM#${platformCode}#EVENTS#${eventType}`,
  eventSortKey: (createdAtMs: number, eventId: string) => `${String(createdAtMs).padStart(15, '0')}#${eventId}`,
} as const;
