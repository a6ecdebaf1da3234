import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '../domain/errors.js';
import type { TaggedItem } from './table/transaction-items.js';
import type { AppContext } from '../context.js';
import { quoteEntity, type QuoteStatus, type QuoteWithdrawal, type StoredQuote } from './entities/quote.js';

export type { QuoteStatus, QuoteWithdrawal, StoredQuote };

/**
 * A new quote as a transaction item, for products that quote and execute in one transaction (rewards,
 * award funding); the condition only guards against reusing a random id.
 */
export function quoteCreationItem(ctx: Pick<AppContext, 'tables'>, quote: StoredQuote): TaggedItem {
  return { item: quoteEntity.put(ctx.tables, quote, { condition: 'attribute_not_exists(pk)' }) };
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
    new GetCommand(quoteEntity.get(ctx.tables, { quote_id: quoteId }, { consistent: true })),
  );
  return out.Item ? quoteEntity.parse(out.Item) : undefined;
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
    item: quoteEntity.update(
      ctx.tables,
      { quote_id: quoteId },
      {
        update: 'SET #status = :executed, executed_at = :now, trade_id = :trade',
        condition: 'attribute_exists(pk) AND #status = :open AND expire_ts > :now',
        names: { '#status': 'status' },
        values: { ':executed': 'executed', ':open': 'open', ':now': nowMs, ':trade': tradeId },
      },
    ),
    onConditionFailed: () => new ConflictError([QUOTE_ALREADY_EXECUTED]),
  };
}
