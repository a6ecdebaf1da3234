import * as z from 'zod/mini';
import { PARTICIPANT_STATUSES } from '../../domain/participant-status.js';
import { integer } from '../entity/attributes.js';
import { defineEntity } from '../entity/entity.js';

const text = z.optional(z.string());
const time = z.optional(integer);

/**
 * A participant: a platform's own (it holds the platform's accounts) or one of its customers. A customer
 * carries its fields as the domain normalised them (lib/domain/customers.ts): its tax id only encrypted,
 * its metadata as JSON text (it may hold numbers DynamoDB can't store exactly).
 */
const participantSchema = z.object({
  participant_code: z.string(),
  platform_code: z.string(),
  kind: z.enum(['platform', 'customer']),
  status: z.enum(PARTICIPANT_STATUSES),
  created_at: integer,
  /** Its status changes so far (0: none): the sequence of its last `participant.status_changed` event. */
  status_version: integer,
  status_changed_at: time,
  /** Customers only: true for a minor (a minor can never be a custodian). */
  is_minor: z.optional(z.boolean()),
  // A customer's fields, adult or minor.
  first_name: text,
  middle_name: text,
  last_name: text,
  email: text,
  /** Lowercased `email`: the key of its e-mail claim. */
  email_normalized: text,
  phone_number: text,
  phone_e164: text,
  address_one: text,
  address_two: text,
  city: text,
  state: text,
  state_code: text,
  zip: text,
  postal_code: text,
  country: text,
  country_alpha2: text,
  jurisdiction_code: text,
  citizenship_code: text,
  date_of_birth: text,
  id_number_type: text,
  id_number: text,
  non_us_other_type: text,
  id_issuing_authority: text,
  tax_id_encrypted: text,
  tax_id_last4: text,
  signed_timestamp: time,
  kyc: text,
  kyc_timestamp: time,
  sanction_screening: text,
  sanction_screening_timestamp: time,
  utma_signed_timestamp: time,
  custodian_participant_code: text,
  custodian_relationship: text,
  metadata_json: text,
});

export type Participant = z.output<typeof participantSchema>;

/**
 * A participant, in its platform's list by creation time. Version 2 carries `status_version`, written 0 at
 * creation; version 1 (no `item_version`) lacked it until its first status change, which meant 0.
 */
export const participantEntity = defineEntity({
  type: 'participant',
  table: 'main',
  schema: participantSchema,
  key: { pk: 'PARTICIPANT#{participant_code}', sk: 'PARTICIPANT' },
  indexes: { gsi1: { pk: 'PLATFORM#{platform_code}#PARTICIPANTS', sk: '{created_at:time}#{participant_code}' } },
  version: 2,
  legacy: [{ below: 2, defaults: { status_version: 0 } }],
});

/**
 * A platform's claim on a lowercased customer e-mail, written in the same transaction as the customer so
 * e-mails stay unique per platform under concurrency; it also finds a customer by e-mail in one read.
 */
export const customerEmailEntity = defineEntity({
  type: 'customer_email',
  table: 'main',
  schema: z.object({
    platform_code: z.string(),
    email_normalized: z.string(),
    participant_code: z.string(),
    created_at: integer,
  }),
  key: { pk: 'CUSTOMER_EMAIL#{platform_code}#{email_normalized}', sk: 'CUSTOMER_EMAIL' },
});
