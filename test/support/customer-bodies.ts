import { randomInt, randomUUID } from 'node:crypto';

/** A US social security number the service accepts: area 500-599, group 01-99, serial 0001-9999 (never 00 / 0000). */
export function validSsn(): string {
  return `5${randomInt(10, 100)}${randomInt(1, 100).toString().padStart(2, '0')}${randomInt(1, 10000).toString().padStart(4, '0')}`;
}

/**
 * A valid POST /participants/customers/new body in the US vocabulary (jurisdiction_code, tax_id,
 * citizenship_code), screened an hour before `nowMs`: the tests that scan output for the tax id send it.
 */
export function usCustomerBody(taxId: string, nowMs: number): Record<string, unknown> {
  const screenedAtMs = nowMs - 3_600_000;
  return {
    first_name: 'Jane',
    last_name: 'Public',
    email: `jane.${randomUUID()}@example.com`,
    address_one: '1 Market St',
    city: 'San Francisco',
    postal_code: '94105',
    jurisdiction_code: 'US-CA',
    citizenship_code: 'US',
    tax_id: taxId,
    date_of_birth: '1985-09-02',
    id_number_type: 'us_drivers_license',
    id_number: 'D7654321',
    id_issuing_authority: 'US',
    signed_timestamp: screenedAtMs,
    kyc: 'pass',
    kyc_timestamp: screenedAtMs,
    sanction_screening: 'pass',
    sanction_screening_timestamp: screenedAtMs,
  };
}
