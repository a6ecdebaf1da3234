import * as z from 'zod/mini';
import { findAsset, type Asset } from './assets.js';
import { AMOUNT_LIMIT, Money, formatAmount, parseAmount, roundToAsset } from './money.js';
import {
  ANONYMOUS_PARTICIPANT,
  FIELD_ORDER,
  TRADE_REPORT_LIMITS as L,
  assetPairOf,
  isAbsent,
  isRecord,
  settlingValue,
  type AssetPair,
  type TradeReportBody,
  type TradeReportPartyBody,
} from './trade-report-fields.js';

/**
 * The rules of a reported trade that span fields: the symbol decides each party's asset and precision,
 * `parties_anonymous` which codes are legal, what is absent which amount method applies; and the caller and
 * the time decide the platform code and the dates. One zod check on the body runs them even when fields
 * failed their own rules (a rule only reads fields that passed theirs), so every issue comes out in one
 * response. `inReportOrder` lists the issues in the order clients have always received them.
 */

export interface TradeReportContext {
  /** The caller's platform, from its API key. */
  platformCode: string;
  /** The platform's own participant code when it differs from `platformCode`; both count as "the platform is a party". */
  platformParticipantCode?: string;
  nowMs: number;
}

/** A: price and quantity, the service computes both amounts. B: price and both amounts, the service checks the ratio. */
export type AmountMethod = 'price_and_quantity' | 'amounts_per_party';

/**
 * Products of inputs bounded by the length limits have at most ~160 digits, so 200 digits of working
 * precision make price × quantity exact. For the price-ratio check the quotient can be non-terminating; with
 * a divisor below 10^60 its expansion can't hold a run of 60 zeros or nines, so rounding at 200 digits and
 * then at 20 can't create or break a tie at the 21st figure.
 */
const Exact = Money.clone({ precision: 200 });

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

/** `parseAmount`'s problem with an amount, without the field name it starts with (an issue's path names it). */
function amountProblem(text: string, asset: Asset): string | undefined {
  const parsed = parseAmount(text, asset, '');
  return typeof parsed === 'string' ? parsed.replace(/^: /, '') : undefined;
}

/**
 * Method A's amounts: the quantity for the buyer (rejected, never rounded, when finer than the base allows)
 * and price × quantity for the seller; or the problem with `trade_quantity`.
 */
export function priceAndQuantityAmounts(
  price: string,
  quantity: string,
  pair: AssetPair,
): { buyer: string; seller: string } | { problem: string } {
  const problem = amountProblem(quantity, pair.base);
  if (problem) return { problem };
  const quoteAmount = quoteAmountFor(price, quantity, pair.quote);
  if (quoteAmount.isZero()) return { problem: `trade_price × trade_quantity rounds to zero ${pair.quote.symbol}` };
  // The computed amount is booked like a client's, so it gets the same bound: beyond it settlement's
  // balance update would fail in DynamoDB on every retry, and the trade could never close.
  if (quoteAmount.gte(AMOUNT_LIMIT)) {
    return {
      problem: `trade_price × trade_quantity must be less than ${AMOUNT_LIMIT.toFixed()} ${pair.quote.symbol}`,
    };
  }
  return { buyer: formatAmount(new Money(quantity), pair.base), seller: formatAmount(quoteAmount, pair.quote) };
}

/** The asset a party receives: the base for the buyer, the quote for the seller. */
export function assetReceived(pair: AssetPair, side: 'buy' | 'sell'): Asset {
  return side === 'buy' ? pair.base : pair.quote;
}

// ---- the check -------------------------------------------------------------------------------------------

/** Absent, null and failed values are left out. */
type Passed<T> = { [K in keyof T]?: Exclude<T[K], null | undefined> };

interface CheckedParty {
  raw: Record<string, unknown>;
  passed: Passed<TradeReportPartyBody>;
}

interface CheckedBody {
  /** The body's known fields as sent: zod keeps a failed value as it came, and no field changes its value. */
  raw: Record<string, unknown>;
  /** The fields that passed their own rules. */
  passed: Passed<TradeReportBody>;
  /** When the list passed its own rules, each party that is an object (undefined for one that isn't). */
  parties: (CheckedParty | undefined)[] | undefined;
}

type Payload = z.core.$RefinementCtx<unknown>;
type Path = (string | number)[];

/**
 * Where an issue of a rule is listed when not with the field it names: with another field (the one the rule
 * is checked with), or after all fields (the rules about the whole trade: both parties, the amounts).
 */
type ListedWith = keyof TradeReportBody | typeof AFTER_ALL_FIELDS;
const AFTER_ALL_FIELDS = 'after all fields';

function addIssue(payload: Payload, path: Path, message: string, listedWith?: ListedWith): void {
  payload.addIssue({ code: 'custom', path, message, ...(listedWith && { params: { listedWith } }) });
}

/** The rules across fields, for one caller at one moment: a check to add to the body's schema. */
export function rulesAcrossFields(ctx: TradeReportContext) {
  return z.superRefine<TradeReportBody>((_, payload) => checkAcrossFields(payload, ctx), {
    when: (payload) => isRecord(payload.value),
  });
}

function checkAcrossFields(payload: Payload, ctx: TradeReportContext): void {
  const body = checkedBody(payload);
  checkCallerAndDates(body, ctx, payload);
  const { passed } = body;
  const pair = passed.symbol === undefined ? undefined : assetPairOf(passed.symbol);
  const parties = body.parties && checkParties(body, pair, ctx, payload);
  // Which method was used is read from the body as sent, so a mix-up is reported even when a party has other errors.
  const method = amountMethod(body.raw, payload);
  if (parties && method && pair && passed.trade_price !== undefined) {
    checkAmounts({ method, pair, price: passed.trade_price, quantity: passed.trade_quantity, parties }, payload);
  }
}

/** The body's values, and which of them passed their own rules (the issues zod found so far say). */
function checkedBody(payload: Payload): CheckedBody {
  const raw = payload.value as Record<string, unknown>;
  const paths = payload.issues.map((issue) => issue.path ?? []);
  const failedUnder = (prefix: Path) =>
    new Set(
      paths
        .filter((path) => path.length > prefix.length && prefix.every((part, i) => path[i] === part))
        .map((path) => path[prefix.length] as PropertyKey),
    );
  const passedOf = <T>(values: Record<string, unknown>, failed: Set<PropertyKey>) =>
    Object.fromEntries(
      Object.entries(values).filter(([field, value]) => !isAbsent(value) && !failed.has(field)),
    ) as Passed<T>;

  const listFailed = paths.some((path) => path.length === 1 && path[0] === 'parties');
  const parties = listFailed
    ? undefined
    : (raw.parties as unknown[]).map((item, index) =>
        isRecord(item)
          ? { raw: item, passed: passedOf<TradeReportPartyBody>(item, failedUnder(['parties', index])) }
          : undefined,
      );
  return { raw, passed: passedOf<TradeReportBody>(raw, failedUnder([])), parties };
}

function checkCallerAndDates(body: CheckedBody, ctx: TradeReportContext, payload: Payload): void {
  const { passed } = body;
  if (passed.platform_code !== undefined && passed.platform_code !== ctx.platformCode) {
    addIssue(payload, ['platform_code'], `must be your platform's code ${ctx.platformCode}`);
  }
  if (passed.product_type === 'forward' && isAbsent(body.raw.settlement_price_index_id)) {
    addIssue(payload, ['settlement_price_index_id'], 'required for forwards');
  }
  if (passed.transaction_timestamp !== undefined && passed.transaction_timestamp > ctx.nowMs + L.clockSkewMs) {
    addIssue(payload, ['transaction_timestamp'], 'must not be in the future');
  }
  const expiry = passed.expiry_timestamp;
  if (expiry === undefined) return;
  // After expiry the trade can no longer change, so a report arriving after it could only default.
  if (expiry <= ctx.nowMs) addIssue(payload, ['expiry_timestamp'], 'has already passed');
  if (passed.settlement_timestamp !== undefined && passed.settlement_timestamp > expiry) {
    addIssue(payload, ['settlement_timestamp'], 'must not be after expiry_timestamp', 'expiry_timestamp');
  }
}

/**
 * Each party against the symbol and `parties_anonymous`, then the rules spanning both parties. Returns the
 * parties when every one passed all its rules and there is a buyer and a seller (the amounts need them).
 */
function checkParties(
  body: CheckedBody,
  pair: AssetPair | undefined,
  ctx: TradeReportContext,
  payload: Payload,
): TradeReportPartyBody[] | undefined {
  const parties = body.parties ?? [];
  parties.forEach((party, index) => {
    if (party) checkParty(party.passed, index, { pair, partiesAnonymous: body.passed.parties_anonymous }, payload);
  });
  checkBothParties(body, ctx, payload);

  // A party with any issue of its own can't be resolved, nor a pair of parties without a buyer and a seller
  // (two buyers were reported above).
  if (parties.some((party, index) => !party || hasIssueUnder(payload, ['parties', index]))) return undefined;
  const valid = (parties as CheckedParty[]).map((party) => party.raw as TradeReportPartyBody);
  if (!valid.some((party) => party.side === 'buy') || !valid.some((party) => party.side === 'sell')) return undefined;
  return valid;
}

function hasIssueUnder(payload: Payload, prefix: Path): boolean {
  return payload.issues.some((issue) => prefix.every((part, i) => issue.path?.[i] === part));
}

function checkParty(
  party: Passed<TradeReportPartyBody>,
  index: number,
  trade: { pair: AssetPair | undefined; partiesAnonymous: boolean | undefined },
  payload: Payload,
): void {
  const at = (field: keyof TradeReportPartyBody): Path => ['parties', index, field];
  const anonymous = party.participant_code === ANONYMOUS_PARTICIPANT;
  if (anonymous && trade.partiesAnonymous === false) {
    addIssue(
      payload,
      at('participant_code'),
      `'${ANONYMOUS_PARTICIPANT}' is only allowed when parties_anonymous is true`,
    );
  }
  if (anonymous && party.settling !== undefined && settlingValue(party.settling, anonymous)) {
    addIssue(payload, at('settling'), `an ${ANONYMOUS_PARTICIPANT} party cannot be settling`);
  }
  const { side, asset, amount } = party;
  if (asset === undefined) return;
  const receives = trade.pair && side ? assetReceived(trade.pair, side) : undefined;
  if (!receives) {
    if (!findAsset(asset)) addIssue(payload, at('asset'), `unknown asset '${asset}'`);
    return;
  }
  if (asset !== receives.symbol) {
    const role = side === 'buy' ? 'the buyer receives the base asset' : 'the seller receives the quote asset';
    addIssue(payload, at('asset'), `must be ${receives.symbol} (${role})`);
  }
  const problem = amount === undefined ? undefined : amountProblem(amount, receives);
  if (problem) addIssue(payload, at('amount'), problem);
}

/** Read from the parties as sent, so they report even when a party has other errors. */
function checkBothParties(body: CheckedBody, ctx: TradeReportContext, payload: Payload): void {
  const parties = (body.parties ?? []).flatMap((party) => (party ? [party.raw] : []));
  const both = parties.length === L.parties;
  const sides = parties.map((party) => party.side);
  if (both && !(sides.includes('buy') && sides.includes('sell'))) {
    addIssue(payload, ['parties'], 'exactly one buy and one sell party are required', AFTER_ALL_FIELDS);
  }
  const platformCodes = [ctx.platformCode, ctx.platformParticipantCode];
  const platformIsParty = parties.some(
    (party) => typeof party.participant_code === 'string' && platformCodes.includes(party.participant_code),
  );
  if (body.passed.parties_anonymous === true && platformIsParty) {
    addIssue(payload, ['parties_anonymous'], 'must be false when the platform is itself a party', AFTER_ALL_FIELDS);
  }
  const settling = parties.map((party) =>
    settlingValue(party.settling, party.participant_code === ANONYMOUS_PARTICIPANT),
  );
  if (both && settling.every((flag) => flag === false)) {
    addIssue(payload, ['parties'], 'at least one party must be settling', AFTER_ALL_FIELDS);
  }
}

/**
 * Method A sends `trade_quantity` and no party amounts; method B the reverse. Anything else is an error
 * (undefined). Decided on presence alone: a malformed `trade_quantity` still means method A.
 */
function amountMethod(raw: Record<string, unknown>, payload: Payload): AmountMethod | undefined {
  const hasQuantity = !isAbsent(raw.trade_quantity);
  const parties = Array.isArray(raw.parties) ? raw.parties : [];
  const withAmount = parties.map((party: unknown) => isRecord(party) && !isAbsent(party.amount));
  const anyAmount = withAmount.includes(true);
  if (hasQuantity && anyAmount) {
    addIssue(payload, ['trade_quantity'], 'must be omitted when the parties carry amounts', AFTER_ALL_FIELDS);
    return undefined;
  }
  if (hasQuantity) return 'price_and_quantity';
  if (!anyAmount) {
    addIssue(payload, ['trade_quantity'], 'required unless every party carries an amount', AFTER_ALL_FIELDS);
    return undefined;
  }
  withAmount.forEach((has, index) => {
    if (!has) {
      addIssue(payload, ['parties', index, 'amount'], 'required when trade_quantity is omitted', AFTER_ALL_FIELDS);
    }
  });
  return withAmount.every(Boolean) ? 'amounts_per_party' : undefined;
}

/** Method A: the amounts can be computed. Method B: the price is the ratio of the amounts. */
function checkAmounts(
  trade: {
    method: AmountMethod;
    pair: AssetPair;
    price: string;
    quantity: string | undefined;
    parties: TradeReportPartyBody[];
  },
  payload: Payload,
): void {
  if (trade.method === 'price_and_quantity') {
    // A malformed trade_quantity (a JSON number, say) was reported with the field.
    if (trade.quantity === undefined) return;
    const amounts = priceAndQuantityAmounts(trade.price, trade.quantity, trade.pair);
    if ('problem' in amounts) addIssue(payload, ['trade_quantity'], amounts.problem, AFTER_ALL_FIELDS);
    return;
  }
  // Both amounts were checked against their assets' precision and positivity with their parties.
  const buyer = trade.parties.find((party) => party.side === 'buy')?.amount as string;
  const seller = trade.parties.find((party) => party.side === 'sell')?.amount as string;
  const ratio = priceMatchesAmounts(trade.price, buyer, seller);
  if (!ratio.matches) {
    const digits = L.priceRatioSignificantDigits;
    const message = `must equal the seller's amount ÷ the buyer's amount to ${digits} significant figures (${ratio.expected})`;
    addIssue(payload, ['trade_price'], message, AFTER_ALL_FIELDS);
  }
}

// ---- the order of the report -----------------------------------------------------------------------------

/**
 * The issues in the order clients have always received them: field by field in the body's order, each
 * party's fields after the body's, party by party, and a rule's issue with the field it is checked with;
 * then the rules about the whole trade, in the order they run. (zod lists the fields' own problems first
 * and the rules across fields after them.)
 */
export function inReportOrder(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  return issues
    .map((issue) => ({ issue, position: reportPosition(issue) }))
    .sort((a, b) => comparePositions(a.position, b.position))
    .map(({ issue }) => issue);
}

function reportPosition(issue: z.core.$ZodIssue): number[] {
  const listedWith: ListedWith | undefined = issue.code === 'custom' ? issue.params?.listedWith : undefined;
  if (listedWith === AFTER_ALL_FIELDS) return [Number.POSITIVE_INFINITY];
  const [field, index, partyField] = listedWith === undefined ? issue.path : [listedWith];
  // The body itself (an empty path) comes first: its one issue is that it isn't an object.
  const position = [FIELD_ORDER.body.indexOf(String(field))];
  if (typeof index === 'number') position.push(index, FIELD_ORDER.party.indexOf(String(partyField)));
  return position;
}

/** Element by element; a position that is a prefix of another (a party, then its fields) comes first. */
function comparePositions(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return (a[i] as number) < (b[i] as number) ? -1 : 1;
  }
  return a.length - b.length;
}
