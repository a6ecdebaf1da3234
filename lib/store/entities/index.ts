import { type ChartedDefinition, entityKeys } from '../entity/chart.js';
import type { EntityChart } from '../entity/entity.js';
import { chunkEntity, distributionEntity } from './award.js';
import { apiKeyEntity } from './api-key.js';
import { auditEntity } from './audit.js';
import { eventEntity, eventRedeliveryEntity } from './event.js';
import { counterShardEntity } from './counter.js';
import { bookingLeaseEntity, bookingResultEntity, queuedBookingEntity } from './booking-queue.js';
import {
  accountEntity,
  accountShardEntity,
  movementAccountEntryEntity,
  movementEntity,
  movementEntryEntity,
} from './ledger.js';
import { platformMigrationRunEntity, tableMigrationRunEntity } from './migration.js';
import { networkFeeEntity } from './network-fee.js';
import { customerEmailEntity, participantEntity } from './participant.js';
import { paymentEntity } from './payment.js';
import { platformEntity } from './platform.js';
import { relationshipEntity } from './relationship.js';
import { priceEntity } from './price.js';
import { quoteEntity } from './quote.js';
import { settlementEventEntity, settlementExecutionEntity } from './settlement-execution.js';
import { tradeEntity, tradeVisibilityEntity } from './trade.js';
import { transferEntity, transferViewEntity } from './transfer.js';
import {
  webhookAttemptEntity,
  webhookDeliveryEntity,
  webhookEndpointCountEntity,
  webhookEndpointEntity,
} from './webhook.js';
import { clientIdClaimEntity, idempotencyRecordEntity, rateWindowEntity, replayClaimEntity } from './window.js';
import { withdrawalEntity } from './withdrawal.js';

/**
 * Every stored entity, in the order the store chart lists them, with its line in the chart (what the item is).
 * Only the chart (and its test) import this: a function imports the definitions it uses, so its bundle carries
 * no others, nor these lines (about 2 KiB in a function that writes a dozen entities).
 */
const CHART_ROWS: readonly (readonly [{ readonly definition: ChartedDefinition }, string])[] = [
  [platformEntity, 'a platform (a tenant): its name, quote spread and rate limit'],
  [
    relationshipEntity,
    "a platform's standing permission to act for a participant (e.g. submits_platform_transfers_for)",
  ],
  [participantEntity, "a participant (a platform's own or a customer), in its platform's list by creation time"],
  [customerEmailEntity, "a platform's claim on a customer e-mail (unique per platform), pointing to the customer"],
  [apiKeyEntity, "a platform's API key: its permissions, sealed secret, passphrase hash and rate limit"],
  [
    accountEntity,
    'an account: exact balance, version and movement count (platform and customer accounts), in its platform list and by id',
  ],
  [accountShardEntity, "one shard of an outside-world account's balance (the balance is the shards' sum)"],
  [movementEntity, "a booked movement (immutable), in its first platform's list by time"],
  [movementEntryEntity, "a movement's entry in a second platform's list"],
  [movementAccountEntryEntity, "a movement's entry in one account's movements list, with the account's net change"],
  [
    queuedBookingEntity,
    "a booking waiting in a shard of its hot account's queue; deleted by the transaction that answers it",
  ],
  [bookingResultEntity, "a queued booking's answer: booked, or refused with the reason"],
  [bookingLeaseEntity, "a hot account's committer lease"],
  [counterShardEntity, "one shard of a list's counter, added to in the transaction of the record it counts"],
  [transferEntity, 'a transfer between two accounts, in its platform list by creation time'],
  [transferViewEntity, "a transfer's copy listed for the platform whose participant it debits (booked under a grant)"],
  [priceEntity, 'the reference price of a pair, overwritten in place (never by an older one)'],
  [quoteEntity, 'a quote, open until executed (once, before it expires)'],
  [tradeEntity, 'a reported or booked trade, in its reporter list by transaction time and, while open, by due time'],
  [tradeVisibilityEntity, "a trade's entry in the list of a party's platform other than the reporter"],
  [
    settlementExecutionEntity,
    "one run of a trade's settlement workflow (local runner), on the running index while RUNNING",
  ],
  [settlementEventEntity, 'one event of a local settlement execution, in order'],
  [
    paymentEntity,
    'an ACH payment; status changes conditioned on the current status, with the clearing movement in the same transaction',
  ],
  [
    withdrawalEntity,
    'a withdrawal request: created PENDING with the convert-withdraw execution, CONFIRMED/FAILED by custody events conditioned on PENDING; stores the accounts it booked against',
  ],
  [networkFeeEntity, "the network fee of an asset's withdrawals, set by ops"],
  [
    distributionEntity,
    'an award distribution: the request and its state, written with its chunks and the pool -> escrow lanes movement in one transaction; on the open index while not completed',
  ],
  [
    chunkEntity,
    'one chunk of an award distribution: its recipients with their trade ids and escrow lane; pending -> credited',
  ],
  [
    eventEntity,
    'written in the transaction of the change it describes; in its platform list and its type list by time, and in the due index (sparse) until dispatched',
  ],
  [eventRedeliveryEntity, 'an insert the dispatcher takes from the stream (POST /events/{id}/redeliver); ttl 1 day'],
  [
    webhookDeliveryEntity,
    'one per (event, endpoint): pending -> in_flight -> succeeded | scheduled | failed; in the due index while work is outstanding',
  ],
  [
    webhookAttemptEntity,
    "a delivery's attempt, written with its next state (conditioned on the claim); in the endpoint's log",
  ],
  [
    webhookEndpointEntity,
    'url, event types, enabled/disabled reason, failure clock, secret (and the previous one during a rotation) encrypted like API secrets',
  ],
  [webhookEndpointCountEntity, 'moved in the transaction that creates (condition `< 20`) or deletes an endpoint'],
  [auditEntity, "an ops command's record: who, why, what changed; in the audit log by time"],
  [tableMigrationRunEntity, "a migration's run over the whole table: who, why, progress, where its read continues"],
  [platformMigrationRunEntity, "a migration's run over one platform's items (scope: the platform's code)"],
  [
    replayClaimEntity,
    '`expires_at_ms` = signed timestamp + 61 s; `request_id` = the X-Request-Id it came with (a repeat with the same id is answered by idempotency, any other repeat is 409)',
  ],
  [
    idempotencyRecordEntity,
    "`expires_at_ms` = first request + 72 h; `in_progress_until_ms` lease; `owner` (the run that holds it); completed with its response in the booking's own transaction",
  ],
  [clientIdClaimEntity, '`expires_at_ms` = claim + 72 h; claimed in the transaction of the record it protects'],
  [
    rateWindowEntity,
    "an API key's request counts in one sustained window: `total` and one per second; `ttl` past the window",
  ],
];

/** Each entity's row of the store chart (lib/store/entity/chart.ts renders them). */
export function entityCharts(): EntityChart[] {
  return CHART_ROWS.map(([entity, description]) => ({ ...entityKeys(entity.definition), description }));
}
