import * as z from 'zod/mini';
import {
  ADULT_AGE_YEARS,
  ADULT_ID_NUMBER_TYPES,
  CUSTODIAN_RELATIONSHIPS,
  ID_NUMBER_TYPES,
  MAX_METADATA_JSON_LENGTH,
  MAX_TEXT_LENGTH,
  SCREENING_RESULTS,
} from '../../domain/customers.js';
import { described } from './common.js';

// The bodies of POST /participants/customers/new and /minor as the API description shows them. The handlers
// pass the body to the domain's customer rules (`validateCustomer`, `validateMinor`), which check every field
// and the rules spanning fields (US state and zip, ID type and country, tax id) at once; this says the same
// fields, types and limits (the rules' own constants). The contract tests check that every customer the
// service accepted matches it.

const text = (description: string) =>
  described(
    z.string().check(z.maxLength(MAX_TEXT_LENGTH)),
    `${description} Trimmed; at most ${MAX_TEXT_LENGTH} characters.`,
  );
const optionalText = (description: string) => z.optional(z.nullable(text(description)));
const epochMs = (description: string) =>
  described(z.int().check(z.minimum(0)), `${description} (UNIX milliseconds, not in the future).`);

const shared = {
  first_name: text('First name.'),
  last_name: text('Last name.'),
  email: text('E-mail, unique per platform (compared in lowercase) across all its customers.'),
  address_one: text('Street address; a PO box is refused.'),
  address_two: optionalText('Second address line.'),
  city: text('City.'),
  state: optionalText(
    'US state name or USPS code; required for the United States (adults: unless `jurisdiction_code` says it).',
  ),
  zip: optionalText(
    'US ZIP code (`12345` or `12345-6789`); required for the United States (adults: or `postal_code`).',
  ),
  country: text(
    'Country: English short name (`United States`), ISO alpha-2 or alpha-3; comprehensively sanctioned jurisdictions are refused.',
  ),
  date_of_birth: described(z.string().check(z.regex(/^\d{4}-\d{2}-\d{2}$/)), 'YYYY-MM-DD.'),
  id_number: optionalText(
    'The ID document number: required unless `id_number_type` is `ssn` (whose number may come as `tax_id`) or, for an adult, the customer is a US citizen (`citizenship_code` `US`) whose `tax_id` is an SSN.',
  ),
  non_us_other_type: optionalText('What the document is, required for `non_in_other` / `non_us_other`.'),
  id_issuing_authority: optionalText('Who issued the document.'),
  metadata: z.optional(
    z.nullable(
      described(
        z.record(z.string(), z.unknown()),
        `Any JSON object, at most ${MAX_METADATA_JSON_LENGTH} characters as JSON; echoed as sent.`,
      ),
    ),
  ),
};

export const customerRequest = z
  .object({
    ...shared,
    middle_name: optionalText('Middle name.'),
    phone_number: optionalText('With its country code (E.164, e.g. `+15557778888`).'),
    postal_code: optionalText('Postal code (in place of `zip`).'),
    country: z.optional(z.nullable(shared.country)),
    jurisdiction_code: optionalText('ISO 3166-2 (e.g. `US-CA`), in place of or agreeing with `state` and `country`.'),
    citizenship_code: optionalText('ISO 3166-1 alpha-2.'),
    tax_id: optionalText(
      'SSN/ITIN for US citizens and residents, a foreign TIN otherwise; required for US citizens. An ITIN (nine digits starting with 9) needs `id_number_type` and `id_number`. Stored encrypted, answered as its last four characters.',
    ),
    id_number_type: z.optional(
      z.nullable(
        described(
          z.enum(ADULT_ID_NUMBER_TYPES as [string, ...string[]]),
          'The ID document type. Required, except for a US citizen (`citizenship_code` `US`) whose `tax_id` is an SSN, who needs no document; required with `id_number`.',
        ),
      ),
    ),
    signed_timestamp: described(
      z.int().check(z.minimum(0)),
      'When the customer agreement was signed (UNIX milliseconds): within the last year, at most a day ahead of server time.',
    ),
    kyc: z.optional(z.nullable(described(z.enum(SCREENING_RESULTS), '`fail` is refused. With `kyc_timestamp`.'))),
    kyc_timestamp: z.optional(
      z.nullable(described(z.int(), 'When the platform ran KYC (UNIX milliseconds). With `kyc`.')),
    ),
    sanction_screening: z.optional(
      z.nullable(described(z.enum(SCREENING_RESULTS), '`fail` is refused. With `sanction_screening_timestamp`.')),
    ),
    sanction_screening_timestamp: z.optional(
      z.nullable(described(z.int(), 'When the platform screened (UNIX milliseconds). With `sanction_screening`.')),
    ),
  })
  .check(
    z.meta({
      id: 'CustomerRequest',
      description: `An adult customer (${ADULT_AGE_YEARS} or older on the request day). Every problem is reported at once.`,
    }),
  );

export const minorRequest = z
  .object({
    ...shared,
    id_number_type: described(z.enum(ID_NUMBER_TYPES), "The ID document type (the spec's types)."),
    utma_signed_timestamp: epochMs('When the UTMA agreement was signed'),
    custodian_participant_code: text('An approved adult customer of the same platform.'),
    custodian_relationship: z.enum(CUSTODIAN_RELATIONSHIPS),
  })
  .check(
    z.meta({
      id: 'MinorRequest',
      description: `A minor (under ${ADULT_AGE_YEARS} on the request day) with a custodian. Every problem is reported at once.`,
    }),
  );
