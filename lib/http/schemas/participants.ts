import * as z from 'zod/mini';
import { SCREENING_RESULTS } from '../../domain/customer-request.js';
import { described, epochMs, messageOf, pageOf } from './common.js';

/**
 * The customer fields a response echoes (as sent, trimmed): every field of the customer's kind (adult or
 * minor) is present, null when the request had no value for it.
 */

const customerEcho = {
  first_name: z.optional(z.nullable(z.string())),
  middle_name: z.optional(z.nullable(z.string())),
  last_name: z.optional(z.nullable(z.string())),
  email: z.optional(z.nullable(z.string())),
  phone_number: z.optional(z.nullable(described(z.string(), 'E.164.'))),
  address_one: z.optional(z.nullable(z.string())),
  address_two: z.optional(z.nullable(z.string())),
  city: z.optional(z.nullable(z.string())),
  state: z.optional(z.nullable(z.string())),
  zip: z.optional(z.nullable(z.string())),
  postal_code: z.optional(z.nullable(z.string())),
  country: z.optional(z.nullable(z.string())),
  jurisdiction_code: z.optional(z.nullable(described(z.string(), 'ISO 3166-2, e.g. `US-CA`.'))),
  citizenship_code: z.optional(z.nullable(z.string())),
  tax_id: z.optional(
    z.nullable(
      described(z.string().check(z.regex(/^\*{5}.{1,4}$/)), 'Only its last four characters, masked: `*****6789`.'),
    ),
  ),
  date_of_birth: z.optional(z.nullable(z.string())),
  id_number_type: z.optional(z.nullable(z.string())),
  id_number: z.optional(z.nullable(z.string())),
  non_us_other_type: z.optional(z.nullable(z.string())),
  id_issuing_authority: z.optional(z.nullable(z.string())),
  signed_timestamp: z.optional(z.nullable(epochMs('Adults: when the customer agreement was signed'))),
  kyc: z.optional(z.nullable(z.enum(SCREENING_RESULTS))),
  kyc_timestamp: z.optional(z.nullable(epochMs('When the platform ran its KYC check'))),
  sanction_screening: z.optional(z.nullable(z.enum(SCREENING_RESULTS))),
  sanction_screening_timestamp: z.optional(z.nullable(epochMs('When the platform ran its sanctions screening'))),
  utma_signed_timestamp: z.optional(z.nullable(epochMs('Minors: when the UTMA agreement was signed'))),
  custodian_participant_code: z.optional(z.nullable(z.string())),
  custodian_relationship: z.optional(z.nullable(z.string())),
  metadata: z.optional(z.nullable(described(z.unknown(), 'The metadata sent, as sent.'))),
};

export const createdCustomerResponse = messageOf(
  z.object({
    ...customerEcho,
    platform_code: z.string(),
    participant_code: described(z.string(), 'The new customer.'),
    status: z.literal('approved'),
  }),
);

const participantSchema = z
  .object({
    participant_code: z.string(),
    platform_code: z.string(),
    kind: described(z.enum(['platform', 'customer']), "`platform`: the platform's own participant."),
    status: z.string(),
    is_minor: z.optional(described(z.boolean(), 'Customers only.')),
    created_at: epochMs('Created'),
    ...customerEcho,
  })
  .check(z.meta({ id: 'Participant' }));

export const participantListResponse = pageOf(participantSchema);
export const participantResponse = messageOf(participantSchema);
