import * as z from 'zod/mini';
import { findAsset, type Asset } from './assets.js';
import { AMOUNT_PATTERN, Money, decimalPlaces } from './money.js';
import {
  ACCOUNT_LABEL_PATTERN,
  ACCOUNT_LABEL_RULE,
  CONTROL_CHARACTER_MESSAGE,
  isPrintableText,
  refusedFirst,
} from './validation.js';

/**
 * The fields of a reported trade (`POST /trades`), each with the checks that need nothing but its own value,
 * its messages and its API description. The rules spanning fields are in `trade-report-rules.ts`;
 * `trade-report.ts` puts both together into the one schema a report is validated with.
 *
 * Each field reports its first problem only, as clients have always seen: every check runs only while its
 * field has no problem yet (`firstProblem`). No field changes its value, so the rules across fields read the
 * body as sent; defaults and amounts are filled in after a successful parse.
 */

export const TRADE_REPORT_LIMITS = {
  clientTradeIdMaxLength: 50,
  textMaxLength: 50,
  symbolMaxLength: 25,
  commentMaxLength: 500,
  settlementPriceIndexIdMaxLength: 20,
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
const PARTICIPANT_CODE_PATTERN = /^[A-Z0-9]{6}$/;
const L = TRADE_REPORT_LIMITS;

const REQUIRED = 'required';
const PARTICIPANT_CODE = 'must be a 6-character participant code';
const DECIMAL = 'must be a decimal string such as "12.34" (no sign, no exponent)';
const TRUE_OR_FALSE = 'must be true or false';

/** Clients of the reference API send null for optional fields they don't use; null counts as absent. */
export function isAbsent(value: unknown): value is undefined | null {
  return value === undefined || value === null;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ---- single-field rules ----------------------------------------------------------------------------------

/**
 * A check runs only while its field has no problem yet. Without that zod would also run a length check on a
 * non-string that has a length (an array) after its type error, and a refinement after a failed length check.
 */
const whileNoProblem = (payload: z.core.ParsePayload) => payload.issues.length === 0;
/** A check's message, the check running only while its field has no problem yet. */
const firstProblem = (message: string) => ({ message, when: whileNoProblem });

/** A missing field (absent or null) is `required`; a value of another type gets `problem`. */
const typeError = (problem: string) => ({
  error: (issue: { input?: unknown }) => (isAbsent(issue.input) ? REQUIRED : problem),
});

const optional = <T extends z.ZodMiniType>(schema: T) => z.optional(z.nullable(schema));

const atMost = (max: number) => z.maxLength(max, firstProblem(`at most ${max} characters`));

/**
 * The checks every text or decimal field has are built once and shared by the fields (a check holds no state
 * of the field it is attached to): zod builds an object for each, and POST /trades builds this module on every
 * cold start (docs/performance.md, "Import time").
 */
const printable = z.refine<string>(isPrintableText, firstProblem(CONTROL_CHARACTER_MESSAGE));
const notEmpty = z.minLength(1, firstProblem('must not be empty'));
const decimalText = z.regex(AMOUNT_PATTERN, firstProblem(DECIMAL));
const stringType = typeError('must be a string');
const decimalType = typeError(DECIMAL);

function text(max: number) {
  return z.string(stringType).check(notEmpty, atMost(max), printable);
}

/** Text that may be empty (`session_id`, `comment`). */
function emptyOrText(max: number) {
  return z.string(stringType).check(atMost(max), printable);
}

function decimal(max: number) {
  return z.string(decimalType).check(decimalText, atMost(max));
}

function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, typeError(`must be one of ${values.join(', ')}`));
}

const INTEGER_MS = 'must be a UNIX timestamp in milliseconds (an integer)';
const OUT_OF_RANGE_MS = 'must be a UNIX timestamp in milliseconds (out of range)';

/** A whole number of milliseconds: anything else is refused before `z.int()` (see `refusedFirst`). */
function timestampMs(description: string) {
  return refusedFirst(
    (value) => (Number.isInteger(value) ? undefined : isAbsent(value) ? REQUIRED : INTEGER_MS),
    // Only an integer reaches it; it still refuses one beyond 2^53, as out of range.
    z
      .int({ error: OUT_OF_RANGE_MS })
      .check(
        z.minimum(L.timestampMinMs, firstProblem(OUT_OF_RANGE_MS)),
        z.maximum(L.timestampMaxMs, firstProblem(OUT_OF_RANGE_MS)),
        z.describe(`${description} (UNIX milliseconds)`),
      ),
  );
}

export interface AssetPair {
  base: Asset;
  quote: Asset;
}

/** The assets of a `BASE/QUOTE` symbol, or what is wrong with it. */
function readSymbol(symbol: string): { pair: AssetPair } | { problems: string[] } {
  const pieces = symbol.split('/');
  if (pieces.length !== 2 || !pieces[0] || !pieces[1]) return { problems: ['must be BASE/QUOTE, e.g. BTC/USD'] };
  const [baseSymbol, quoteSymbol] = pieces as [string, string];
  const base = findAsset(baseSymbol);
  const quote = findAsset(quoteSymbol);
  if (!base || !quote) {
    return {
      problems: [
        ...(base ? [] : [`unknown asset '${baseSymbol}'`]),
        ...(quote ? [] : [`unknown asset '${quoteSymbol}'`]),
      ],
    };
  }
  if (base.symbol === quote.symbol) return { problems: ['base and quote must be different assets'] };
  return { pair: { base, quote } };
}

/** The assets of a symbol that passed its rules; undefined for one that didn't. */
export function assetPairOf(symbol: string): AssetPair | undefined {
  const read = readSymbol(symbol);
  return 'pair' in read ? read.pair : undefined;
}

const symbol = text(L.symbolMaxLength).check(
  z.superRefine(
    (value, payload) => {
      const read = readSymbol(value);
      if ('problems' in read) for (const message of read.problems) payload.addIssue({ code: 'custom', message });
    },
    { when: whileNoProblem },
  ),
  z.describe('`BASE/QUOTE` of known assets.'),
);

/**
 * `settling` arrives as a boolean from most clients and as "true"/"false" from some (the spec types it as a
 * string). Absent means settling, as in the reference API, except for an `Anonymous` party, which can't
 * settle. Undefined for any other value.
 */
export function settlingValue(raw: unknown, anonymous: boolean): boolean | undefined {
  if (isAbsent(raw)) return !anonymous;
  if (raw === true || raw === 'true') return true;
  if (raw === false || raw === 'false') return false;
  return undefined;
}

// ---- the body --------------------------------------------------------------------------------------------

const party = z.object(
  {
    side: oneOf(['buy', 'sell']),
    participant_code: text(L.textMaxLength).check(
      z.refine(
        (code) => PARTICIPANT_CODE_PATTERN.test(code) || code === ANONYMOUS_PARTICIPANT,
        firstProblem(PARTICIPANT_CODE),
      ),
      z.describe(`A 6-character participant code, or \`${ANONYMOUS_PARTICIPANT}\` when \`parties_anonymous\` is true.`),
    ),
    asset: text(L.symbolMaxLength).check(
      z.describe('What this party receives: the base of `symbol` for the buyer, the quote for the seller.'),
    ),
    amount: optional(
      decimal(L.amountMaxLength).check(
        z.describe(
          "Method B: what this party receives, at the asset's precision. Omit with `trade_quantity` (method A).",
        ),
      ),
    ),
    settling: optional(
      z
        .union([z.boolean(), z.enum(['true', 'false'])], { error: TRUE_OR_FALSE })
        .check(z.describe('Default true (false for an anonymous party, which cannot settle).')),
    ),
    account_label: optional(
      z
        .string(typeError('must be a string'))
        .check(z.regex(ACCOUNT_LABEL_PATTERN, firstProblem(ACCOUNT_LABEL_RULE)), z.describe('`general` when absent.')),
    ),
    liquidity_indicator: optional(oneOf(['added', 'removed'])),
    client_order_id: optional(text(L.clientOrderIdMaxLength)),
    order_id: optional(text(L.orderIdMaxLength)),
    execution_id: optional(text(L.executionIdMaxLength)),
  },
  'must be an object',
);

/**
 * The list's own problems are reported alone: with the wrong number of parties, what is wrong inside each
 * one is noise. (zod would check the items first and the length after.)
 */
const partyList = z.pipe(
  z.transform((list: unknown, payload) => {
    let problem: string | undefined;
    if (isAbsent(list)) problem = REQUIRED;
    else if (!Array.isArray(list)) problem = 'must be an array';
    else if (list.length !== L.parties) problem = `exactly ${L.parties} parties are supported, got ${list.length}`;
    if (problem) payload.issues.push({ code: 'custom', message: problem, input: list });
    return list as unknown[];
  }),
  z.array(party).check(z.length(L.parties), z.describe('Exactly one buy and one sell party; at least one settling.')),
);

/**
 * The fields in the order their problems are listed. `settlement_price_index_id` follows `product_type`,
 * which decides whether it is required.
 */
export const tradeReportBody = z.object(
  {
    client_trade_id: text(L.clientTradeIdMaxLength).check(
      z.describe('Your id for the trade: unique per platform for 72 hours.'),
    ),
    // The reference answers '' for a trade outside a trading session, and its clients often leave the
    // field out; an absent session id is stored as that ''.
    session_id: optional(
      emptyOrText(L.textMaxLength).check(z.describe('`""` (the default) for a trade outside a trading session.')),
    ),
    trade_reporter: text(L.textMaxLength).check(z.describe('Who reports the trade.')),
    reporting_party: optional(
      z
        .string(typeError(PARTICIPANT_CODE))
        .check(z.regex(PARTICIPANT_CODE_PATTERN, firstProblem(PARTICIPANT_CODE)), z.describe('A participant code.')),
    ),
    settlement_schedule: optional(text(L.textMaxLength)),
    platform_code: text(L.textMaxLength).check(z.describe("Your platform's code.")),
    market_identifier_code: optional(text(L.textMaxLength)),
    symbol,
    product_type: oneOf(['spot', 'forward']),
    settlement_price_index_id: optional(
      text(L.settlementPriceIndexIdMaxLength).check(z.describe('Required for forwards.')),
    ),
    trade_type: oneOf(['regular', 'block']),
    trade_price: decimal(L.priceMaxLength).check(
      z.refine((price) => !new Money(price).isZero(), firstProblem('must be greater than zero')),
      z.describe('Greater than zero; any precision, echoed as sent.'),
    ),
    trade_quantity: optional(
      decimal(L.amountMaxLength).check(
        z.describe(
          'Method A: the quantity of the base (the service computes both amounts). Omit to give each party its `amount` (method B).',
        ),
      ),
    ),
    physical_delivery: z
      .literal(true, {
        error: (issue) =>
          issue.input === false ? 'only true is supported (financial settlement is not)' : 'must be true',
      })
      .check(z.describe('Only physical delivery is supported.')),
    transaction_timestamp: timestampMs('When the trade was executed; not in the future'),
    comment: optional(emptyOrText(L.commentMaxLength)),
    parties_anonymous: z.boolean(typeError(TRUE_OR_FALSE)),
    settlement_timestamp: optional(timestampMs('When settlement may start; not after expiry')),
    expiry_timestamp: optional(timestampMs('Forwards: when an unsettled trade defaults; in the future')),
    bank_fee: optional(
      decimal(L.amountMaxLength).check(
        z.refine(
          (fee) => decimalPlaces(fee) <= L.bankFeeDecimals,
          firstProblem(`at most ${L.bankFeeDecimals} decimal places`),
        ),
        z.describe(`At most ${L.bankFeeDecimals} decimals.`),
      ),
    ),
    parties: partyList,
  },
  'must be a JSON object',
);

export type TradeReportBody = z.output<typeof tradeReportBody>;
export type TradeReportPartyBody = z.output<typeof party>;

/** Field names in the order their problems are listed: the body's, then each party's. */
export const FIELD_ORDER = {
  body: Object.keys(tradeReportBody.shape),
  party: Object.keys(party.shape),
} as const;
