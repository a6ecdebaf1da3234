import * as z from 'zod/mini';
import type { EventType, ResourceType } from '../../domain/events.js';
import { amount, described, epochMs, signedAmount } from './common.js';
import { paymentSchema } from './payments.js';
import { tradeSchema } from './trades.js';
import { withdrawalRequestFields } from './withdrawals.js';

/** A withdrawal request as GET /withdrawals/requests/{id} shows it, less the destination address (personal data). */
const { withdrawal_address: _address, ...withdrawalEventFields } = withdrawalRequestFields;
const withdrawalEventData = z.object(withdrawalEventFields).check(z.meta({ id: 'WithdrawalEventData' }));

/**
 * The event envelope, the same in `GET /events` and in a webhook delivery, with the
 * `data` of each event type: the resource as its GET route shows it, without personal data.
 */
function envelope<T extends EventType, D extends z.ZodMiniType>(
  type: T,
  resourceType: ResourceType,
  data: D,
  description: string,
) {
  return z
    .object({
      id: described(
        z.string().check(z.regex(/^evt_[0-9a-z]+$/)),
        'Event id; the `webhook-id` of every delivery of it.',
      ),
      type: z.literal(type),
      created_at: epochMs('When the change committed'),
      platform_code: z.string(),
      resource: z.object({ type: z.literal(resourceType), id: z.string() }),
      sequence: described(
        z.int().check(z.minimum(1)),
        'Increases per resource: drop an event older than one already applied (delivery order is not guaranteed).',
      ),
      previous_status: described(z.nullable(z.string()), 'The status before the change, where there is one.'),
      data,
    })
    .check(z.meta({ id: eventSchemaId(type), description }));
}

/** `trade.status_changed` -> `TradeStatusChangedEvent`. */
export function eventSchemaId(type: string): string {
  return `${type
    .split(/[._]/)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join('')}Event`;
}

export const EVENT_SCHEMAS = {
  'participant.status_changed': envelope(
    'participant.status_changed',
    'participant',
    z.looseObject({ participant_code: z.string(), platform_code: z.string(), kind: z.string(), status: z.string() }),
    "A participant's status changed (approved, locked, disabled).",
  ),
  'account_balance.changed': envelope(
    'account_balance.changed',
    'account',
    z.looseObject({
      account_id: z.string(),
      asset: z.string(),
      balance: signedAmount('The new balance.'),
      movement: z.looseObject({
        movement_id: z.string(),
        type: described(
          z.string(),
          'trade, transfer, deposit, reward, award_fund, award_distribution, withdrawal, ach...',
        ),
        reference: z.string(),
        change: signedAmount("This account's signed change."),
      }),
    }),
    'A movement changed the balance of an account (one event per account it touches).',
  ),
  'trade.status_changed': envelope(
    'trade.status_changed',
    'trade',
    tradeSchema,
    'A trade was executed, or a reported trade moved a settlement step.',
  ),
  'payment.status_changed': envelope(
    'payment.status_changed',
    'payment',
    paymentSchema,
    'An ACH payment moved (submitted, pending, posted, failed, reversed).',
  ),
  'withdrawal.status_changed': envelope(
    'withdrawal.status_changed',
    'withdrawal',
    withdrawalEventData,
    'A withdrawal request was created (PENDING, by a convert-withdraw execution), or confirmed or failed by custody.',
  ),
  'award_distribution.completed': envelope(
    'award_distribution.completed',
    'award_distribution',
    z.object({
      request_id: z.string(),
      asset: z.string(),
      quantity: amount("Each recipient's amount."),
      quoted_currency: z.string(),
      recipient_count: z.int(),
      total: amount('What the recipients received together.'),
      chunk_count: z.int(),
      status: z.literal('completed'),
      created_at: epochMs('When the distribution was recorded'),
      completed_at: epochMs('When its last chunk was credited'),
    }),
    'Every chunk of an award distribution is credited (each recipient trade has its own trade.status_changed).',
  ),
  'webhook.test': envelope(
    'webhook.test',
    'webhook_endpoint',
    z.looseObject({}),
    'Sent by `POST /webhooks/endpoints/{id}/test`.',
  ),
} as const satisfies Record<EventType, z.ZodMiniType>;

/** Any event: what `GET /events` lists. */
export const eventSchema = z.union(Object.values(EVENT_SCHEMAS));
