import type { AccountRef } from './ledger.js';
import { ValidationError } from './errors.js';
import { AMOUNT_LIMIT, AMOUNT_PATTERN, decimalPlaces, Money } from './money.js';
import type { QuoteSide } from './quotes.js';

/** Grouping 1: the service generates an ACH transaction against the client's external bank account. */
export interface AchDebitCreditFunding {
  kind: 'ach_debit_credit';
  external_account_id: string;
  description: string;
  bank_fee: Money;
}

/** Grouping 2: the platform sends the ACH itself and gives us a reference to reconcile it with. */
export interface InboundReferenceFunding {
  kind: 'inbound_reference';
  inbound_reference_id: string;
}

export type FundingDetails = AchDebitCreditFunding | InboundReferenceFunding;

export type FundingDetailsResult = { ok: true; value: FundingDetails } | { ok: false; errors: string[] };

const FIELD = 'funding_details';
const BOTH_GROUPINGS = 'either external_account_id, description and bank_fee, or inbound_reference_id';
const ACH_FIELDS = ['external_account_id', 'description', 'bank_fee'] as const;
const INBOUND_FIELDS = ['inbound_reference_id'] as const;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The ACH record carries the description in a fixed 10-character field. */
const ACH_DESCRIPTION_MAX_CHARS = 10;
/** NACHA records are ASCII; anything outside printable ASCII could not travel with the transaction. */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const BANK_FEE_DECIMALS = 2;

/**
 * Parses `funding_details` of an execute request. Exactly one grouping must be present, complete; every
 * problem is reported at once. Unknown keys are ignored like any other unknown body field. A key whose value
 * is null counts as absent, as JSON clients often send null for "not given".
 */
export function parseFundingDetails(input: unknown): FundingDetailsResult {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { ok: false, errors: [`${FIELD}: must be an object`] };
  }
  const body = input as Record<string, unknown>;
  const has = (key: string) => body[key] !== undefined && body[key] !== null;
  const achGiven = ACH_FIELDS.filter(has);
  const inboundGiven = INBOUND_FIELDS.filter(has);

  if (achGiven.length > 0 && inboundGiven.length > 0) {
    const given = [...achGiven, ...inboundGiven].join(', ');
    return { ok: false, errors: [`${FIELD}: give exactly one grouping, ${BOTH_GROUPINGS} (got ${given})`] };
  }
  if (inboundGiven.length > 0) return parseInboundReference(body);
  if (achGiven.length > 0) return parseAchDebitCredit(body, has);
  return { ok: false, errors: [`${FIELD}: must contain ${BOTH_GROUPINGS}`] };
}

/** A bank's reference for reconciliation; generous, but bounded like every client string. */
const INBOUND_REFERENCE_MAX_CHARS = 100;

function parseInboundReference(body: Record<string, unknown>): FundingDetailsResult {
  const id = body.inbound_reference_id;
  if (typeof id !== 'string' || id.trim() === '') {
    return { ok: false, errors: [`${FIELD}.inbound_reference_id: must be a non-empty string`] };
  }
  if (id.length > INBOUND_REFERENCE_MAX_CHARS) {
    return { ok: false, errors: [`${FIELD}.inbound_reference_id: at most ${INBOUND_REFERENCE_MAX_CHARS} characters`] };
  }
  return { ok: true, value: { kind: 'inbound_reference', inbound_reference_id: id } };
}

function parseAchDebitCredit(body: Record<string, unknown>, has: (key: string) => boolean): FundingDetailsResult {
  const errors: string[] = [];
  for (const key of ACH_FIELDS) {
    if (has(key)) continue;
    const others = ACH_FIELDS.filter((other) => other !== key).join(' and ');
    errors.push(`${FIELD}.${key}: is required with ${others}`);
  }

  let accountId: string | undefined;
  if (has('external_account_id')) {
    const value = body.external_account_id;
    if (typeof value === 'string' && UUID_PATTERN.test(value)) accountId = value;
    else errors.push(`${FIELD}.external_account_id: must be a UUID`);
  }

  let description: string | undefined;
  if (has('description')) {
    const value = body.description;
    const problem = descriptionProblem(value);
    if (problem === null && typeof value === 'string') description = value;
    else errors.push(`${FIELD}.description: ${problem}`);
  }

  let bankFee: Money | undefined;
  if (has('bank_fee')) {
    const parsed = parseBankFee(body.bank_fee);
    if (typeof parsed === 'string') errors.push(`${FIELD}.bank_fee: ${parsed}`);
    else bankFee = parsed;
  }

  if (accountId === undefined || description === undefined || bankFee === undefined) return { ok: false, errors };
  return {
    ok: true,
    value: { kind: 'ach_debit_credit', external_account_id: accountId, description, bank_fee: bankFee },
  };
}

function descriptionProblem(description: unknown): string | null {
  if (typeof description !== 'string') return 'must be a string';
  if (description.trim() === '') return 'must not be empty';
  if (!PRINTABLE_ASCII.test(description)) return 'must contain printable ASCII characters only';
  if (description.length > ACH_DESCRIPTION_MAX_CHARS) return `at most ${ACH_DESCRIPTION_MAX_CHARS} characters`;
  return null;
}

/**
 * The spec allows a JSON number here. JSON.parse has already turned it into a double, so the best we can do
 * is take its shortest round-trip text (what `String` gives), which is the literal the client wrote unless
 * they wrote more than about 15 significant digits. Arithmetic only ever happens on the Decimal made from
 * that text.
 */
function parseBankFee(value: unknown): Money | string {
  let amount: Money;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return 'must be a finite number';
    if (value < 0) return 'must not be negative';
    // Very large or very small doubles print in exponent form, which Decimal reads exactly.
    amount = new Money(String(value));
    if (amount.decimalPlaces() > BANK_FEE_DECIMALS) return `at most ${BANK_FEE_DECIMALS} decimal places`;
  } else {
    if (typeof value !== 'string') return 'must be a number or a decimal string';
    if (value.startsWith('-')) return 'must not be negative';
    if (!AMOUNT_PATTERN.test(value)) return 'must be a decimal string such as "1.50" (no sign, no exponent)';
    if (decimalPlaces(value) > BANK_FEE_DECIMALS) return `at most ${BANK_FEE_DECIMALS} decimal places`;
    amount = new Money(value);
  }
  // Bounded like every client amount: a buy's payment (trade amount + fee) is booked when the bank posts it,
  // and beyond the bound that write would fail in DynamoDB on every redelivery.
  if (amount.gte(AMOUNT_LIMIT)) return `must be less than ${AMOUNT_LIMIT.toFixed()}`;
  return amount;
}

export type AchTransferType = 'debit' | 'credit';

/** A buyer's bank is debited to pay for the asset; a seller's is credited with the proceeds. */
export function achTransferType(side: QuoteSide): AchTransferType {
  return side === 'buy' ? 'debit' : 'credit';
}

/**
 * The amount of the ACH transaction. The client bears the bank fee either way: it is added to what a buyer
 * is debited and taken from what a seller is credited.
 */
export function achPaymentAmount(side: QuoteSide, tradeAmount: Money, bankFee: Money): Money {
  if (tradeAmount.lte(0)) throw new Error('trade amount must be positive');
  if (bankFee.isNeg()) throw new Error('bank fee must not be negative');
  if (side === 'buy') return tradeAmount.plus(bankFee);
  const credit = tradeAmount.minus(bankFee);
  if (credit.lte(0)) {
    throw new ValidationError([
      `${FIELD}.bank_fee: must be less than the trade amount ${tradeAmount.toFixed()} for a sell`,
    ]);
  }
  return credit;
}

export const PAYMENT_STATUSES = ['submitted', 'pending', 'posted', 'failed', 'reversed'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/**
 * Legal moves. `failed` and `reversed` are terminal; once money has posted the only way back is a reversal
 * (a new reversing movement in the ledger), never a failure.
 */
const NEXT_STATUSES: Readonly<Record<PaymentStatus, readonly PaymentStatus[]>> = {
  submitted: ['pending', 'failed'],
  pending: ['posted', 'failed'],
  posted: ['reversed'],
  failed: [],
  reversed: [],
};

/**
 * The `sequence` of a payment's payment.status_changed event on reaching `status`: its step along the only
 * paths a payment can take (submitted 1, pending 2, posted or failed 3, reversed 4). Every move is conditioned
 * on the status it leaves and statuses never repeat, so the number grows with each change without a counter.
 */
export function paymentStatusSequence(status: PaymentStatus): number {
  return { submitted: 1, pending: 2, posted: 3, failed: 3, reversed: 4 }[status];
}

export function isPaymentStatus(value: unknown): value is PaymentStatus {
  return typeof value === 'string' && (PAYMENT_STATUSES as readonly string[]).includes(value);
}

type PaymentEventOutcome = { kind: 'apply' } | { kind: 'noop' } | { kind: 'illegal'; message: string };

/**
 * Decides what a bank event does to a payment. Banks redeliver events, so a repeat of the current status is
 * a harmless no-op rather than an error. `next` is a plain string because events arrive from outside.
 */
export function applyPaymentEvent(current: PaymentStatus, next: string): PaymentEventOutcome {
  if (!isPaymentStatus(next)) {
    const expected = PAYMENT_STATUSES.join(', ');
    return { kind: 'illegal', message: `status: unknown payment status '${next}', expected one of ${expected}` };
  }
  if (next === current) return { kind: 'noop' };
  if (NEXT_STATUSES[current].includes(next)) return { kind: 'apply' };
  return { kind: 'illegal', message: `status: a payment cannot move from ${current} to ${next}` };
}

/**
 * An ACH payment transaction. `amount` is what the bank moves (fixed-point, the asset's decimals);
 * `trade_amount` what the trade itself was worth, the difference being the bank fee.
 */
export interface Payment {
  transaction_id: string;
  platform_code: string;
  trade_id: string | null;
  participant_code: string;
  asset: string;
  amount: string;
  trade_amount: string;
  status: PaymentStatus;
  transfer_type: AchTransferType;
  bank_transfer_id: string;
  /** Which `funding_details` grouping created it. */
  funding: 'ach_debit_credit' | 'inbound_reference';
  external_account_id: string | null;
  description: string | null;
  bank_fee: string | null;
  /** Grouping 2: the platform's own reference for the inbound ACH, for reconciliation. */
  inbound_reference_id: string | null;
  /** The platform's clearing account the trade's fiat leg was booked against; bank events book against it too. */
  clearing_account: AccountRef;
  created_at_ms: number;
  updated_at_ms: number;
}

/** A payment as clients see it: the spec's payment transaction fields, timestamps as ISO 8601. */
export function paymentView(payment: Payment) {
  return {
    transaction_id: payment.transaction_id,
    trade_id: payment.trade_id,
    participant_code: payment.participant_code,
    amount: payment.amount,
    status: payment.status,
    transfer_type: payment.transfer_type,
    bank_transfer_id: payment.bank_transfer_id,
    created_at: new Date(payment.created_at_ms).toISOString(),
    updated_at: new Date(payment.updated_at_ms).toISOString(),
  };
}

export type PaymentView = ReturnType<typeof paymentView>;
