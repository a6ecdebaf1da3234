import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { QuoteSide } from '../domain/quotes.js';
import { ConflictError } from '../domain/errors.js';
import { keys } from './keys.js';
import { readInteger, readOptionalInteger } from './table/integers.js';
import type { TaggedItem } from './table/transaction-items.js';
import type { AppContext } from '../context.js';

export type QuoteStatus = 'open' | 'executed';

/**
 * A stored quote. `product` tells which execute route may take it (a convert-withdraw quote is not a
 * liquidity quote, though both live here). Amounts are fixed-point text with exactly their asset's decimals,
 * the price its exact decimal text; none of them is ever summed in DynamoDB.
 */
export interface StoredQuote {
  quote_id: string;
  product: 'liquidity' | (string & {});
  /** The RFQ's request id, echoed in the quote and in the execution result. */
  request_id: string;
  platform_code: string;
  /** Whose accounts trade: the platform's own participant or one of its customers. */
  participant_code: string;
  account_group: string;
  account_label: string;
  /** True when the participant is one of the platform's customers rather than the platform itself. */
  on_behalf_of: boolean;
  side: QuoteSide;
  underlying: string;
  quoted_currency: string;
  quantity: string;
  total: string;
  price: string;
  /** The reference price and spread the price was made from, kept for audit. */
  reference_price: string;
  spread_bps: string;
  /** The client gave `quantity` or `total`; the other was computed and rounded. */
  quoted_by: 'quantity' | 'total';
  created_at: number;
  expire_ts: number;
  status: QuoteStatus;
  executed_at: number | null;
  trade_id: string | null;
  /** Convert-withdraw quotes only: where the bought asset goes and the network fee on top of `total`. */
  withdrawal?: QuoteWithdrawal;
}

export interface QuoteWithdrawal {
  address: string;
  /** Fee in the underlying, fixed-point with its decimals; what the fee account receives. */
  network_fee_quantity: string;
  /** The fee priced in the quoted currency, fixed-point with its decimals. */
  network_fee_notional: string;
  /** `total` + `network_fee_notional`: what the participant pays in all. */
  total_notional: string;
}

/**
 * A new quote as a transaction item, for products that quote and execute in one transaction (rewards,
 * award funding); the condition only guards against reusing a random id.
 */
export function quoteCreationItem(ctx: Pick<AppContext, 'tables'>, quote: StoredQuote): TaggedItem {
  return {
    item: {
      Put: {
        TableName: ctx.tables.main,
        Item: { ...quote, ...keys.quote(quote.quote_id), type: 'quote' },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  };
}

/** Stores a new quote; the condition only guards against reusing a random id. */
export async function putQuote(ctx: Pick<AppContext, 'db' | 'tables'>, quote: StoredQuote): Promise<void> {
  await ctx.db.send(new PutCommand(quoteCreationItem(ctx, quote).item.Put!));
}

/**
 * Read strongly consistently: execution decides on the status it is about to condition on, and a quote
 * executed a moment ago must not look open.
 */
export async function getQuote(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  quoteId: string,
): Promise<StoredQuote | undefined> {
  const out = await ctx.db.send(
    new GetCommand({ TableName: ctx.tables.main, Key: keys.quote(quoteId), ConsistentRead: true }),
  );
  const item = out.Item;
  if (!item) return undefined;
  return {
    quote_id: item.quote_id,
    product: item.product,
    request_id: item.request_id,
    platform_code: item.platform_code,
    participant_code: item.participant_code,
    account_group: item.account_group,
    account_label: item.account_label,
    on_behalf_of: item.on_behalf_of === true,
    side: item.side,
    underlying: item.underlying,
    quoted_currency: item.quoted_currency,
    quantity: item.quantity,
    total: item.total,
    price: item.price,
    reference_price: item.reference_price,
    spread_bps: item.spread_bps,
    quoted_by: item.quoted_by,
    created_at: readInteger(item.created_at),
    expire_ts: readInteger(item.expire_ts),
    status: item.status,
    executed_at: readOptionalInteger(item.executed_at),
    trade_id: item.trade_id ?? null,
    ...(item.withdrawal && {
      withdrawal: {
        address: item.withdrawal.address,
        network_fee_quantity: item.withdrawal.network_fee_quantity,
        network_fee_notional: item.withdrawal.network_fee_notional,
        total_notional: item.withdrawal.total_notional,
      },
    }),
  };
}

export const QUOTE_ALREADY_EXECUTED = 'quote_id: the quote has already been executed';

/**
 * Marks a quote executed, for the transaction that books its trade. Applied only while the quote is open
 * and unexpired at `nowMs`, so of any number of concurrent executions exactly one commits. The caller
 * checks expiry with the same `nowMs` before writing, so a failure here means another execution won.
 */
export function quoteExecutionItem(
  ctx: Pick<AppContext, 'tables'>,
  quoteId: string,
  tradeId: string,
  nowMs: number,
): TaggedItem {
  return {
    item: {
      Update: {
        TableName: ctx.tables.main,
        Key: keys.quote(quoteId),
        UpdateExpression: 'SET #status = :executed, executed_at = :now, trade_id = :trade',
        ConditionExpression: 'attribute_exists(pk) AND #status = :open AND expire_ts > :now',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':executed': 'executed', ':open': 'open', ':now': nowMs, ':trade': tradeId },
      },
    },
    onConditionFailed: () => new ConflictError([QUOTE_ALREADY_EXECUTED]),
  };
}
