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
import { platformEntity, relationshipEntity } from './platform.js';
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
 * Every stored entity, in the order the store chart lists them. Only the chart (and its test) import this:
 * a function imports the definitions it uses, so its bundle carries no others.
 */
export const ENTITIES: readonly { chart(): EntityChart }[] = [
  platformEntity,
  relationshipEntity,
  participantEntity,
  customerEmailEntity,
  apiKeyEntity,
  accountEntity,
  accountShardEntity,
  movementEntity,
  movementEntryEntity,
  movementAccountEntryEntity,
  queuedBookingEntity,
  bookingResultEntity,
  bookingLeaseEntity,
  counterShardEntity,
  transferEntity,
  transferViewEntity,
  priceEntity,
  quoteEntity,
  tradeEntity,
  tradeVisibilityEntity,
  settlementExecutionEntity,
  settlementEventEntity,
  paymentEntity,
  withdrawalEntity,
  networkFeeEntity,
  distributionEntity,
  chunkEntity,
  eventEntity,
  eventRedeliveryEntity,
  webhookDeliveryEntity,
  webhookAttemptEntity,
  webhookEndpointEntity,
  webhookEndpointCountEntity,
  auditEntity,
  tableMigrationRunEntity,
  platformMigrationRunEntity,
  replayClaimEntity,
  idempotencyRecordEntity,
  clientIdClaimEntity,
  rateWindowEntity,
];
