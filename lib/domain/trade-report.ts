import { findAsset, type Asset } from './assets.js';
import {
  AMOUNT_LIMIT,
  AMOUNT_PATTERN,
  Money,
  decimalPlaces,
  formatAmount,
  parseAmount,
  roundToAsset,
} from './money.js';

/**
 * Validation of a reported trade (`POST /trades`) into the record the service stores, settles and echoes.
 *
 * Written as plain checks rather than a zod schema because nearly every rule reaches across fields (the
 * symbol decides each party's asset and precision, `parties_anonymous` decides which codes are legal, the
 * amount method depends on what is absent), and every issue has to come out in one response, in a fixed
 * order: top-level fields, then each party, then rules spanning parties, then the amount method and amounts.
 */

export type Side = 'buy' | 'sell';
export type ProductType = 'spot' | 'forward';
export type TradeType = 'regular' | 'block';
export type LiquidityIndicator = 'added' | 'removed';
/** A: price and quantity, the service computes both amounts. B: price and both amounts, the service checks the ratio. */
export type AmountMethod = 'price_and_quantity' | 'amounts_per_party';

export interface TradeReportParty {
  side: Side;
  participant_code: string;
  /** The asset this party receives: the base for the buyer, the quote for the seller. */
  asset: string;
  /** What this party receives, fixed-point with exactly the asset's decimals. */
  amount: string;
  settling: boolean;
  account_label: string;
  liquidity_indicator: LiquidityIndicator | null;
  client_order_id: string | null;
  order_id: string | null;
  execution_id: string | null;
}

export interface TradeReport {
  client_trade_id: string;
  session_id: string;
  trade_reporter: string;
  reporting_party: string | null;
  settlement_schedule: string | null;
  platform_code: string;
  market_identifier_code: string | null;
  symbol: string;
  product_type: ProductType;
  trade_type: TradeType;
  /** As submitted: any precision is accepted and echoed unchanged. */
  trade_price: string;
  /** The buyer's amount (method A: the submitted quantity; method B: the buyer's amount). */
  trade_quantity: string;
  amount_method: AmountMethod;
  physical_delivery: true;
  transaction_timestamp: number;
  comment: string | null;
  parties_anonymous: boolean;
  settlement_price_index_id: string | null;
  settlement_timestamp: number | null;
  expiry_timestamp: number | null;
  bank_fee: string | null;
  contract_size: 1;
  /** Base asset of `symbol`. */
  underlying: string;
  /** Quote asset of `symbol`. */
  quoted_currency: string;
  /** In submission order; exactly one `buy` and one `sell`. */
  parties: [TradeReportParty, TradeReportParty];
}

export interface TradeReportContext {
  /** The caller's platform, from its API key. */
  platformCode: string;
  /** The platform's own participant code when it differs from `platformCode`; both count as "the platform is a party". */
  platformParticipantCode?: string;
  nowMs: number;
}

export type TradeReportResult = { ok: true; value: TradeReport } | { ok: false; errors: string[] };

export const TRADE_REPORT_LIMITS = {
  clientTradeIdMaxLength: 50,
  textMaxLength: 50,
  symbolMaxLength: 25,
  commentMaxLength: 500,
  settlementPriceIndexIdMaxLength: 20,
  accountLabelMaxLength: 40,
  clientOrderIdMaxLength: 36,
  orderIdMaxLength: 100,
  executionIdMaxLength: 100,
  parties: 2,
  priceRatioSignificantDigits: 20,
  bankFeeDecimals: 2,
  /** Generous enough for 12 integer digits at ETH's 18 decimals; bounds the cost of exact arithmetic. */
  amountMaxLength: 60,
  priceMaxLength: 100,
  /** The reference API's bounds on every ms timestamp; also catches seconds sent where ms are expected. */
  timestampMinMs: 1_254_408_627_334,
  timestampMaxMs: 2_554_408_627_334,
  /** A trade executed "in the future" beyond ordinary clock drift is a client error. */
  clockSkewMs: 60_000,
} as const;

export const ANONYMOUS_PARTICIPANT = 'Anonymous';
export const DEFAULT_ACCOUNT_LABEL = 'general';
const PARTICIPANT_CODE_PATTERN = /^[A-Z0-9]{6}$/;

/**
 * Products of inputs bounded by the length limits above have at most ~160 digits, so 200 digits of working
 * precision make price × quantity exact. For the price-ratio check the quotient can be non-terminating; with
 * a divisor below 10^60 its expansion can't hold a run of 60 zeros or nines, so rounding at 200 digits and
 * then at 20 can't create or break a tie at the 21st figure.
 */
const Exact = Money.clone({ precision: 200 });

const L = TRADE_REPORT_LIMITS;

export function validateTradeReport(body: unknown, ctx: TradeReportContext): TradeReportResult {
  if (!isRecord(body)) return { ok: false, errors: ['body: must be a JSON object'] };

  const errors: string[] = [];
  const fields = new FieldReader(body, errors);

  const client_trade_id = fields.text('client_trade_id', { required: true, max: L.clientTradeIdMaxLength });
  // Optional: the reference answers '' for a trade outside a trading session, and its
  // clients often leave the field out; an absent session id is stored as that ''.
  const session_id = fields.text('session_id', { required: false, max: L.textMaxLength, allowEmpty: true }) ?? '';
  const trade_reporter = fields.text('trade_reporter', { required: true, max: L.textMaxLength });
  const reporting_party = fields.code('reporting_party', { required: false });
  const settlement_schedule = fields.text('settlement_schedule', { required: false, max: L.textMaxLength });

  const platform_code = fields.text('platform_code', { required: true, max: L.textMaxLength });
  if (platform_code !== undefined && platform_code !== ctx.platformCode) {
    errors.push(`platform_code: must be your platform's code ${ctx.platformCode}`);
  }
  const market_identifier_code = fields.text('market_identifier_code', { required: false, max: L.textMaxLength });

  const symbol = fields.text('symbol', { required: true, max: L.symbolMaxLength });
  const pair = symbol === undefined ? undefined : parseSymbol(symbol, errors);

  const product_type = fields.oneOf('product_type', ['spot', 'forward'] as const, { required: true });
  const settlement_price_index_id = fields.text('settlement_price_index_id', {
    required: product_type === 'forward',
    max: L.settlementPriceIndexIdMaxLength,
    requiredWhy: 'required for forwards',
  });
  const trade_type = fields.oneOf('trade_type', ['regular', 'block'] as const, { required: true });

  const trade_price_text = fields.decimalText('trade_price', { required: true, max: L.priceMaxLength });
  let trade_price: Money | undefined;
  if (trade_price_text !== undefined) {
    trade_price = new Exact(trade_price_text);
    if (trade_price.isZero()) {
      errors.push('trade_price: must be greater than zero');
      trade_price = undefined;
    }
  }
  const trade_quantity_text = fields.decimalText('trade_quantity', { required: false, max: L.amountMaxLength });

  const physical_delivery = body.physical_delivery;
  if (physical_delivery === false) {
    errors.push('physical_delivery: only true is supported (financial settlement is not)');
  } else if (physical_delivery !== true) {
    errors.push('physical_delivery: must be true');
  }

  const transaction_timestamp = fields.timestamp('transaction_timestamp', { required: true });
  if (transaction_timestamp !== undefined && transaction_timestamp > ctx.nowMs + L.clockSkewMs) {
    errors.push('transaction_timestamp: must not be in the future');
  }
  const comment = fields.text('comment', { required: false, max: L.commentMaxLength, allowEmpty: true });
  const parties_anonymous = fields.boolean('parties_anonymous', { required: true });

  const settlement_timestamp = fields.timestamp('settlement_timestamp', { required: false });
  const expiry_timestamp = fields.timestamp('expiry_timestamp', { required: false });
  if (expiry_timestamp !== undefined) {
    // After expiry the trade can no longer change, so a report arriving after it could only default.
    if (expiry_timestamp <= ctx.nowMs) errors.push('expiry_timestamp: has already passed');
    if (settlement_timestamp !== undefined && settlement_timestamp > expiry_timestamp) {
      errors.push('settlement_timestamp: must not be after expiry_timestamp');
    }
  }

  const bank_fee = fields.decimalText('bank_fee', { required: false, max: L.amountMaxLength });
  if (bank_fee !== undefined && decimalPlaces(bank_fee) > L.bankFeeDecimals) {
    errors.push(`bank_fee: at most ${L.bankFeeDecimals} decimal places`);
  }

  const parties = readParties(body.parties, {
    errors,
    pair,
    parties_anonymous,
    platformCodes: [ctx.platformCode, ctx.platformParticipantCode].filter((c): c is string => c !== undefined),
  });

  // Which method was used is read from the raw body, so a mix-up is reported even when a party has other errors.
  const method = checkAmountMethod(body, errors);
  const amounts =
    parties === undefined || method === undefined
      ? undefined
      : resolveAmounts({ errors, method, pair, trade_price, trade_price_text, trade_quantity_text, parties });

  if (errors.length > 0) return { ok: false, errors };
  // Every branch that leaves one of these undefined has pushed an error; the check only narrows the types.
  if (
    client_trade_id === undefined ||
    trade_reporter === undefined ||
    platform_code === undefined ||
    symbol === undefined ||
    pair === undefined ||
    product_type === undefined ||
    trade_type === undefined ||
    trade_price_text === undefined ||
    transaction_timestamp === undefined ||
    parties_anonymous === undefined ||
    parties === undefined ||
    amounts === undefined
  ) {
    throw new Error('validateTradeReport: a field is missing without a validation error');
  }

  const finalParties = parties.map((party, index) => ({ ...party, amount: amounts.partyAmounts[index] as string }));
  return {
    ok: true,
    value: {
      client_trade_id,
      session_id,
      trade_reporter,
      reporting_party: reporting_party ?? null,
      settlement_schedule: settlement_schedule ?? null,
      platform_code,
      market_identifier_code: market_identifier_code ?? null,
      symbol,
      product_type,
      trade_type,
      trade_price: trade_price_text,
      trade_quantity: amounts.trade_quantity,
      amount_method: amounts.method,
      physical_delivery: true,
      transaction_timestamp,
      comment: comment ?? null,
      parties_anonymous,
      settlement_price_index_id: settlement_price_index_id ?? null,
      settlement_timestamp: settlement_timestamp ?? null,
      expiry_timestamp: expiry_timestamp ?? null,
      bank_fee: bank_fee ?? null,
      contract_size: 1,
      underlying: pair.base.symbol,
      quoted_currency: pair.quote.symbol,
      parties: [finalParties[0] as TradeReportParty, finalParties[1] as TradeReportParty],
    },
  };
}

/**
 * Whether `price` equals `sellerAmount ÷ buyerAmount` to 20 significant figures. Both sides are rounded to 20
 * significant figures half-to-even (the service's one rounding rule) and compared; the expected price is
 * returned so an error can show it.
 */
export function priceMatchesAmounts(
  price: string,
  buyerAmount: string,
  sellerAmount: string,
): { matches: boolean; expected: string } {
  const digits = L.priceRatioSignificantDigits;
  const expected = new Exact(sellerAmount)
    .div(new Exact(buyerAmount))
    .toSignificantDigits(digits, Money.ROUND_HALF_EVEN);
  const given = new Exact(price).toSignificantDigits(digits, Money.ROUND_HALF_EVEN);
  return { matches: expected.eq(given), expected: expected.toFixed() };
}

/** Method A: the seller's amount, price × quantity rounded half-to-even to the quote's precision. */
export function quoteAmountFor(price: string, quantity: string, quote: Asset): Money {
  return roundToAsset(new Exact(price).mul(new Exact(quantity)), quote);
}

// ---------------------------------------------------------------------------------------------------------

interface Pair {
  base: Asset;
  quote: Asset;
}

function parseSymbol(symbol: string, errors: string[]): Pair | undefined {
  const pieces = symbol.split('/');
  if (pieces.length !== 2 || !pieces[0] || !pieces[1]) {
    errors.push('symbol: must be BASE/QUOTE, e.g. BTC/USD');
    return undefined;
  }
  const [baseSymbol, quoteSymbol] = pieces as [string, string];
  const base = findAsset(baseSymbol);
  const quote = findAsset(quoteSymbol);
  if (!base) errors.push(`symbol: unknown asset '${baseSymbol}'`);
  if (!quote) errors.push(`symbol: unknown asset '${quoteSymbol}'`);
  if (!base || !quote) return undefined;
  if (base.symbol === quote.symbol) {
    errors.push('symbol: base and quote must be different assets');
    return undefined;
  }
  return { base, quote };
}

/** A party as read from the body, before amounts are settled on. */
interface PartyDraft extends Omit<TradeReportParty, 'amount'> {
  /** As submitted (method B), already checked against the asset's precision; undefined when absent. */
  amount: string | undefined;
}

function readParties(
  raw: unknown,
  ctx: { errors: string[]; pair: Pair | undefined; parties_anonymous: boolean | undefined; platformCodes: string[] },
): PartyDraft[] | undefined {
  const { errors, pair, parties_anonymous } = ctx;
  if (raw === undefined || raw === null) {
    errors.push('parties: required');
    return undefined;
  }
  if (!Array.isArray(raw)) {
    errors.push('parties: must be an array');
    return undefined;
  }
  if (raw.length !== L.parties) {
    errors.push(`parties: exactly ${L.parties} parties are supported, got ${raw.length}`);
    return undefined;
  }

  const drafts: (PartyDraft | undefined)[] = raw.map((item: unknown, index) => {
    const at = `parties[${index}]`;
    if (!isRecord(item)) {
      errors.push(`${at}: must be an object`);
      return undefined;
    }
    const before = errors.length;
    const fields = new FieldReader(item, errors, `${at}.`);
    const side = fields.oneOf('side', ['buy', 'sell'] as const, { required: true });

    const participant_code = fields.text('participant_code', { required: true, max: L.textMaxLength });
    if (participant_code !== undefined && !PARTICIPANT_CODE_PATTERN.test(participant_code)) {
      if (participant_code !== ANONYMOUS_PARTICIPANT) {
        errors.push(`${at}.participant_code: must be a 6-character participant code`);
      } else if (parties_anonymous === false) {
        errors.push(
          `${at}.participant_code: '${ANONYMOUS_PARTICIPANT}' is only allowed when parties_anonymous is true`,
        );
      }
    }
    const anonymous = participant_code === ANONYMOUS_PARTICIPANT;

    const asset = fields.text('asset', { required: true, max: L.symbolMaxLength });
    let receives: Asset | undefined;
    if (asset !== undefined) {
      if (pair && side) {
        receives = side === 'buy' ? pair.base : pair.quote;
        if (asset !== receives.symbol) {
          const role = side === 'buy' ? 'the buyer receives the base asset' : 'the seller receives the quote asset';
          errors.push(`${at}.asset: must be ${receives.symbol} (${role})`);
        }
      } else if (!findAsset(asset)) {
        errors.push(`${at}.asset: unknown asset '${asset}'`);
      }
    }

    let amount: string | undefined;
    if (!isAbsent(item.amount)) {
      amount = fields.decimalText('amount', { required: true, max: L.amountMaxLength });
      if (amount !== undefined && receives) {
        const parsed = parseAmount(amount, receives, `${at}.amount`);
        if (typeof parsed === 'string') {
          errors.push(parsed);
          amount = undefined;
        }
      }
    }

    const settling = readSettling(item.settling, `${at}.settling`, anonymous, errors);
    const account_label =
      fields.text('account_label', { required: false, max: L.accountLabelMaxLength }) ?? DEFAULT_ACCOUNT_LABEL;
    const liquidity_indicator = fields.oneOf('liquidity_indicator', ['added', 'removed'] as const, { required: false });
    const client_order_id = fields.text('client_order_id', { required: false, max: L.clientOrderIdMaxLength });
    const order_id = fields.text('order_id', { required: false, max: L.orderIdMaxLength });
    const execution_id = fields.text('execution_id', { required: false, max: L.executionIdMaxLength });

    if (errors.length > before || !side || !participant_code || !asset || settling === undefined) return undefined;
    return {
      side,
      participant_code,
      asset,
      amount,
      settling,
      account_label,
      liquidity_indicator: liquidity_indicator ?? null,
      client_order_id: client_order_id ?? null,
      order_id: order_id ?? null,
      execution_id: execution_id ?? null,
    };
  });

  // Rules across both parties look only at the raw values, so they report even when a party has other errors.
  const rawParties = raw.filter(isRecord);
  const sides = rawParties.map((p) => p.side);
  if (rawParties.length === L.parties && !(sides.includes('buy') && sides.includes('sell'))) {
    errors.push('parties: exactly one buy and one sell party are required');
  }
  const codes = rawParties.map((p) => p.participant_code);
  if (
    parties_anonymous === true &&
    codes.some((code) => typeof code === 'string' && ctx.platformCodes.includes(code))
  ) {
    errors.push('parties_anonymous: must be false when the platform is itself a party');
  }
  const settlingFlags = rawParties.map((p) => settlingValue(p.settling, p.participant_code === ANONYMOUS_PARTICIPANT));
  if (rawParties.length === L.parties && settlingFlags.every((flag) => flag === false)) {
    errors.push('parties: at least one party must be settling');
  }

  if (drafts.some((d) => d === undefined)) return undefined;
  const valid = drafts as PartyDraft[];
  // A second `buy` was reported above; without one of each side there is no buyer or seller to resolve.
  if (!valid.some((p) => p.side === 'buy') || !valid.some((p) => p.side === 'sell')) return undefined;
  return valid;
}

/**
 * `settling` arrives as a boolean from most clients and as "true"/"false" from some (the spec types it as a
 * string). Absent means settling, as in the reference API, except for an `Anonymous` party, which can't settle.
 */
function settlingValue(raw: unknown, anonymous: boolean): boolean | undefined {
  if (isAbsent(raw)) return !anonymous;
  if (raw === true || raw === 'true') return true;
  if (raw === false || raw === 'false') return false;
  return undefined;
}

function readSettling(raw: unknown, field: string, anonymous: boolean, errors: string[]): boolean | undefined {
  const value = settlingValue(raw, anonymous);
  if (value === undefined) {
    errors.push(`${field}: must be true or false`);
    return undefined;
  }
  if (value && anonymous) {
    errors.push(`${field}: an ${ANONYMOUS_PARTICIPANT} party cannot be settling`);
    return undefined;
  }
  return value;
}

/**
 * Method A sends `trade_quantity` and no party amounts; method B the reverse. Anything else is an error
 * (undefined). Decided on presence alone: a malformed `trade_quantity` still means method A.
 */
function checkAmountMethod(body: Record<string, unknown>, errors: string[]): AmountMethod | undefined {
  const hasQuantity = !isAbsent(body.trade_quantity);
  const rawParties = Array.isArray(body.parties) ? body.parties : [];
  const withAmount = rawParties.map((p: unknown) => isRecord(p) && !isAbsent(p.amount));
  const anyAmount = withAmount.some(Boolean);

  if (hasQuantity && anyAmount) {
    errors.push('trade_quantity: must be omitted when the parties carry amounts');
    return undefined;
  }
  if (!hasQuantity && !anyAmount) {
    errors.push('trade_quantity: required unless every party carries an amount');
    return undefined;
  }
  if (!hasQuantity) {
    const before = errors.length;
    withAmount.forEach((has, index) => {
      if (!has) errors.push(`parties[${index}].amount: required when trade_quantity is omitted`);
    });
    return errors.length === before ? 'amounts_per_party' : undefined;
  }
  return 'price_and_quantity';
}

/** Runs only on a body whose parties and method are valid; computes (A) or checks (B) the final amounts. */
function resolveAmounts(input: {
  errors: string[];
  method: AmountMethod;
  pair: Pair | undefined;
  trade_price: Money | undefined;
  trade_price_text: string | undefined;
  trade_quantity_text: string | undefined;
  parties: PartyDraft[];
}): { method: AmountMethod; trade_quantity: string; partyAmounts: string[] } | undefined {
  const { errors, pair, trade_price_text, trade_quantity_text, parties } = input;
  if (!pair || input.trade_price === undefined || trade_price_text === undefined) return undefined;

  const buyerIndex = parties.findIndex((p) => p.side === 'buy');
  const sellerIndex = parties.findIndex((p) => p.side === 'sell');

  if (input.method === 'price_and_quantity') {
    // A malformed trade_quantity (a JSON number, say) was reported when it was read.
    if (trade_quantity_text === undefined) return undefined;
    // Method A. A quantity finer than the base allows is rejected, never rounded (client-supplied amount).
    const quantity = parseAmount(trade_quantity_text, pair.base, 'trade_quantity');
    if (typeof quantity === 'string') {
      errors.push(quantity);
      return undefined;
    }
    const quoteAmount = quoteAmountFor(trade_price_text, trade_quantity_text, pair.quote);
    if (quoteAmount.isZero()) {
      errors.push(`trade_quantity: trade_price × trade_quantity rounds to zero ${pair.quote.symbol}`);
      return undefined;
    }
    // The computed amount is booked like a client's, so it gets the same bound: beyond it settlement's
    // balance update would fail in DynamoDB on every retry, and the trade could never close.
    if (quoteAmount.gte(AMOUNT_LIMIT)) {
      errors.push(
        `trade_quantity: trade_price × trade_quantity must be less than ${AMOUNT_LIMIT.toFixed()} ${pair.quote.symbol}`,
      );
      return undefined;
    }
    const buyerAmount = formatAmount(quantity, pair.base);
    const partyAmounts = parties.map((_, index) =>
      index === buyerIndex ? buyerAmount : formatAmount(quoteAmount, pair.quote),
    );
    return { method: 'price_and_quantity', trade_quantity: buyerAmount, partyAmounts };
  }

  // Method B: both amounts were checked against their assets' precision and positivity while reading parties.
  const buyerAmount = parties[buyerIndex]?.amount as string;
  const sellerAmount = parties[sellerIndex]?.amount as string;
  const ratio = priceMatchesAmounts(trade_price_text, buyerAmount, sellerAmount);
  if (!ratio.matches) {
    errors.push(
      `trade_price: must equal the seller's amount ÷ the buyer's amount to ${L.priceRatioSignificantDigits} significant figures (${ratio.expected})`,
    );
    return undefined;
  }
  const partyAmounts = parties.map((p, index) =>
    formatAmount(new Money(p.amount as string), index === buyerIndex ? pair.base : pair.quote),
  );
  return { method: 'amounts_per_party', trade_quantity: partyAmounts[buyerIndex] as string, partyAmounts };
}

// ---------------------------------------------------------------------------------------------------------

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Clients of the reference API send null for optional fields they don't use; null counts as absent. */
function isAbsent(value: unknown): value is undefined | null {
  return value === undefined || value === null;
}

/**
 * Reads one object's fields, pushing `<prefix><field>: <problem>` for each issue and returning undefined for a
 * field that is absent or wrong, so callers keep going and every issue is collected.
 */
class FieldReader {
  constructor(
    private readonly source: Record<string, unknown>,
    private readonly errors: string[],
    private readonly prefix = '',
  ) {}

  private present(field: string, required: boolean, why = 'required'): unknown {
    const value = this.source[field];
    if (isAbsent(value)) {
      if (required) this.errors.push(`${this.prefix}${field}: ${why}`);
      return undefined;
    }
    return value;
  }

  text(
    field: string,
    options: { required: boolean; max: number; allowEmpty?: boolean; requiredWhy?: string },
  ): string | undefined {
    const value = this.present(field, options.required, options.requiredWhy);
    if (value === undefined) return undefined;
    if (typeof value !== 'string') return this.fail(field, 'must be a string');
    if (value.length === 0 && !options.allowEmpty) return this.fail(field, 'must not be empty');
    if (value.length > options.max) return this.fail(field, `at most ${options.max} characters`);
    return value;
  }

  code(field: string, options: { required: boolean }): string | undefined {
    const value = this.present(field, options.required);
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || !PARTICIPANT_CODE_PATTERN.test(value)) {
      return this.fail(field, 'must be a 6-character participant code');
    }
    return value;
  }

  oneOf<T extends string>(field: string, allowed: readonly T[], options: { required: boolean }): T | undefined {
    const value = this.present(field, options.required);
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
      return this.fail(field, `must be one of ${allowed.join(', ')}`);
    }
    return value as T;
  }

  boolean(field: string, options: { required: boolean }): boolean | undefined {
    const value = this.present(field, options.required);
    if (value === undefined) return undefined;
    if (typeof value !== 'boolean') return this.fail(field, 'must be true or false');
    return value;
  }

  decimalText(field: string, options: { required: boolean; max: number }): string | undefined {
    const value = this.present(field, options.required);
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || !AMOUNT_PATTERN.test(value)) {
      return this.fail(field, 'must be a decimal string such as "12.34" (no sign, no exponent)');
    }
    if (value.length > options.max) return this.fail(field, `at most ${options.max} characters`);
    return value;
  }

  timestamp(field: string, options: { required: boolean }): number | undefined {
    const value = this.present(field, options.required);
    if (value === undefined) return undefined;
    if (typeof value !== 'number' || !Number.isInteger(value)) {
      return this.fail(field, 'must be a UNIX timestamp in milliseconds (an integer)');
    }
    if (value < L.timestampMinMs || value > L.timestampMaxMs) {
      return this.fail(field, 'must be a UNIX timestamp in milliseconds (out of range)');
    }
    return value;
  }

  private fail(field: string, problem: string): undefined {
    this.errors.push(`${this.prefix}${field}: ${problem}`);
    return undefined;
  }
}
