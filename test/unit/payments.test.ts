import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../lib/domain/errors.js';
import { Money } from '../../lib/domain/money.js';
import {
  achPaymentAmount,
  achTransferType,
  applyPaymentEvent,
  isPaymentStatus,
  parseFundingDetails,
  PAYMENT_STATUSES,
  type FundingDetailsResult,
  type PaymentStatus,
} from '../../lib/domain/payments.js';

const ACCOUNT_ID = '3f2c1a9e-8b7d-4c6e-9f10-2a3b4c5d6e7f';
const ach = { external_account_id: ACCOUNT_ID, description: 'BTC BUY', bank_fee: '1.50' };
const m = (text: string) => new Money(text);

function errorsOf(result: FundingDetailsResult): string[] {
  if (result.ok) throw new Error('expected the funding details to be rejected');
  return result.errors;
}

function bankFeeOf(input: unknown): string {
  const result = parseFundingDetails({ ...ach, bank_fee: input });
  if (!result.ok) throw new Error(`rejected: ${result.errors.join('; ')}`);
  if (result.value.kind !== 'ach_debit_credit') throw new Error('wrong grouping');
  return result.value.bank_fee.toFixed();
}

describe('parseFundingDetails: groupings', () => {
  it('accepts grouping 1 (ACH debit/credit)', () => {
    const result = parseFundingDetails(ach);
    expect(result.ok).toBe(true);
    if (!result.ok || result.value.kind !== 'ach_debit_credit') throw new Error('wrong result');
    expect(result.value.external_account_id).toBe(ACCOUNT_ID);
    expect(result.value.description).toBe('BTC BUY');
    expect(result.value.bank_fee.toFixed(2)).toBe('1.50');
  });

  it('accepts grouping 2 (inbound reference)', () => {
    expect(parseFundingDetails({ inbound_reference_id: 'REF-2024-0001' })).toEqual({
      ok: true,
      value: { kind: 'inbound_reference', inbound_reference_id: 'REF-2024-0001' },
    });
  });

  it('ignores unknown keys and null values', () => {
    const result = parseFundingDetails({ inbound_reference_id: 'REF-1', external_account_id: null, note: 'x' });
    expect(result.ok).toBe(true);
  });

  it('rejects fields of both groupings, naming them', () => {
    const errors = errorsOf(parseFundingDetails({ ...ach, inbound_reference_id: 'REF-1' }));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^funding_details: give exactly one grouping/);
    expect(errors[0]).toContain('external_account_id, description, bank_fee, inbound_reference_id');
  });

  it('rejects an empty object', () => {
    expect(errorsOf(parseFundingDetails({}))).toEqual([
      'funding_details: must contain either external_account_id, description and bank_fee, or inbound_reference_id',
    ]);
  });

  it.each([null, 'ach', 42, []])('rejects a non-object %j', (input) => {
    expect(errorsOf(parseFundingDetails(input))).toEqual(['funding_details: must be an object']);
  });

  it('names every missing field of an incomplete grouping 1', () => {
    expect(errorsOf(parseFundingDetails({ external_account_id: ACCOUNT_ID }))).toEqual([
      'funding_details.description: is required with external_account_id and bank_fee',
      'funding_details.bank_fee: is required with external_account_id and description',
    ]);
  });

  it('reports every invalid field at once', () => {
    expect(
      errorsOf(
        parseFundingDetails({ external_account_id: 'not-a-uuid', description: 'ABCDEFGHIJK', bank_fee: '1.505' }),
      ),
    ).toEqual([
      'funding_details.external_account_id: must be a UUID',
      'funding_details.description: at most 10 characters',
      'funding_details.bank_fee: at most 2 decimal places',
    ]);
  });

  it('rejects an empty inbound_reference_id', () => {
    expect(errorsOf(parseFundingDetails({ inbound_reference_id: '  ' }))).toEqual([
      'funding_details.inbound_reference_id: must be a non-empty string',
    ]);
  });
});

describe('parseFundingDetails: description', () => {
  it('accepts exactly 10 characters', () => {
    expect(parseFundingDetails({ ...ach, description: 'ABCDEFGHIJ' }).ok).toBe(true);
  });

  it('rejects 11 characters', () => {
    expect(errorsOf(parseFundingDetails({ ...ach, description: 'ABCDEFGHIJK' }))).toEqual([
      'funding_details.description: at most 10 characters',
    ]);
  });

  it('rejects blank, non-string and non-ASCII descriptions', () => {
    expect(errorsOf(parseFundingDetails({ ...ach, description: '   ' }))).toEqual([
      'funding_details.description: must not be empty',
    ]);
    expect(errorsOf(parseFundingDetails({ ...ach, description: 12 }))).toEqual([
      'funding_details.description: must be a string',
    ]);
    expect(errorsOf(parseFundingDetails({ ...ach, description: 'Café' }))).toEqual([
      'funding_details.description: must contain printable ASCII characters only',
    ]);
  });
});

describe('parseFundingDetails: bank_fee', () => {
  it.each([
    ['1.50', '1.5'],
    ['0', '0'],
    ['.5', '0.5'],
    ['12', '12'],
  ])('accepts the string %s', (input, value) => {
    expect(bankFeeOf(input)).toBe(value);
  });

  it.each([
    [1.5, '1.5'],
    [0, '0'],
    [25, '25'],
    [0.1, '0.1'],
    [-0, '0'],
  ])('accepts the number %s through its shortest text form', (input, value) => {
    expect(bankFeeOf(input)).toBe(value);
  });

  it.each([
    ['1.505', 'at most 2 decimal places'],
    [1.505, 'at most 2 decimal places'],
    ['-1.00', 'must not be negative'],
    [-1, 'must not be negative'],
    ['1e2', 'must be a decimal string such as "1.50" (no sign, no exponent)'],
    ['', 'must be a decimal string such as "1.50" (no sign, no exponent)'],
    ['1.', 'must be a decimal string such as "1.50" (no sign, no exponent)'],
    [Number.NaN, 'must be a finite number'],
    [Number.POSITIVE_INFINITY, 'must be a finite number'],
    [1e-7, 'at most 2 decimal places'],
    [true, 'must be a number or a decimal string'],
    // Bounded like every client amount: a buy's payment is the trade amount plus this fee, booked when it posts.
    ['1000000000000000', 'must be less than 1000000000000000'],
    [`1${'0'.repeat(40)}`, 'must be less than 1000000000000000'],
    [1e21, 'must be less than 1000000000000000'],
  ])('rejects %j', (input, message) => {
    expect(errorsOf(parseFundingDetails({ ...ach, bank_fee: input }))).toEqual([
      `funding_details.bank_fee: ${message}`,
    ]);
  });

  it('accepts a fee just under the bound', () => {
    expect(bankFeeOf('999999999999999.99')).toBe('999999999999999.99');
  });
});

describe('achPaymentAmount', () => {
  it('debits a buyer the trade amount plus the fee', () => {
    expect(achPaymentAmount('buy', m('25000.00'), m('1.50')).toFixed(2)).toBe('25001.50');
    expect(achTransferType('buy')).toBe('debit');
  });

  it('credits a seller the trade amount minus the fee', () => {
    expect(achPaymentAmount('sell', m('25000.00'), m('1.50')).toFixed(2)).toBe('24998.50');
    expect(achTransferType('sell')).toBe('credit');
  });

  it('allows a zero fee', () => {
    expect(achPaymentAmount('sell', m('10.00'), m('0')).toFixed(2)).toBe('10.00');
  });

  it('rejects a sell whose fee eats the whole trade', () => {
    for (const fee of ['10.00', '10.01']) {
      let caught: unknown;
      try {
        achPaymentAmount('sell', m('10.00'), m(fee));
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ValidationError);
      expect((caught as ValidationError).errors).toEqual([
        'funding_details.bank_fee: must be less than the trade amount 10 for a sell',
      ]);
    }
  });
});

describe('applyPaymentEvent', () => {
  const legal: [PaymentStatus, PaymentStatus][] = [
    ['submitted', 'pending'],
    ['pending', 'posted'],
    ['submitted', 'failed'],
    ['pending', 'failed'],
    ['posted', 'reversed'],
  ];
  const isLegal = (from: PaymentStatus, to: PaymentStatus) => legal.some(([a, b]) => a === from && b === to);

  it.each(legal)('applies %s → %s', (from, to) => {
    expect(applyPaymentEvent(from, to)).toEqual({ kind: 'apply' });
  });

  it.each(PAYMENT_STATUSES.map((status) => [status]))('ignores a repeat of %s', (status) => {
    expect(applyPaymentEvent(status, status)).toEqual({ kind: 'noop' });
  });

  const illegal = PAYMENT_STATUSES.flatMap((from) =>
    PAYMENT_STATUSES.filter((to) => to !== from && !isLegal(from, to)).map((to) => [from, to] as const),
  );

  it('has 15 illegal moves among the 20 changes of status', () => {
    expect(illegal).toHaveLength(15);
  });

  it.each(illegal)('rejects %s → %s', (from, to) => {
    expect(applyPaymentEvent(from, to)).toEqual({
      kind: 'illegal',
      message: `status: a payment cannot move from ${from} to ${to}`,
    });
  });

  it('rejects an unknown status', () => {
    const outcome = applyPaymentEvent('submitted', 'settled');
    expect(outcome.kind).toBe('illegal');
    expect(isPaymentStatus('settled')).toBe(false);
    expect(isPaymentStatus('posted')).toBe(true);
  });
});
