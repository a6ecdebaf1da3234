import { NotFoundError } from '../domain/errors.js';
import { listEnvelope } from '../domain/list-envelope.js';
import { getTradeVisibleTo, pageOfTrades, type TradeListFilters } from '../store/trades.js';
import { tradeView } from '../domain/trade.js';
import type { AppContext } from '../context.js';

/** The index-carried filters (the store's) plus the time bounds and paging of `GET /trades`. */
interface TradeFilters extends TradeListFilters {
  /** Transaction-time bounds in ms: the reference API's bracket operators... */
  'transaction_timestamp[gt]'?: number;
  'transaction_timestamp[gte]'?: number;
  'transaction_timestamp[e]'?: number;
  'transaction_timestamp[lt]'?: number;
  'transaction_timestamp[lte]'?: number;
  /** ...and plain inclusive bounds. */
  transaction_timestamp_from?: number;
  transaction_timestamp_to?: number;
  page: number;
  page_size: number;
  cursor?: string;
}

/** Every bound folded into one inclusive range (all must hold), which the index query uses directly. */
function inclusiveRange(filters: TradeFilters): { fromMs?: number; toMs?: number } {
  const gt = filters['transaction_timestamp[gt]'];
  const lt = filters['transaction_timestamp[lt]'];
  const exactly = filters['transaction_timestamp[e]'];
  const lows = [
    filters['transaction_timestamp[gte]'],
    filters.transaction_timestamp_from,
    gt === undefined ? undefined : gt + 1,
    exactly,
  ];
  const highs = [
    filters['transaction_timestamp[lte]'],
    filters.transaction_timestamp_to,
    lt === undefined ? undefined : lt - 1,
    exactly,
  ];
  return { ...bound('fromMs', lows, Math.max), ...bound('toMs', highs, Math.min) };
}

function bound<K extends string>(
  key: K,
  values: (number | undefined)[],
  pick: (...values: number[]) => number,
): Partial<Record<K, number>> {
  const given = values.filter((v): v is number => v !== undefined);
  return given.length > 0 ? ({ [key]: pick(...given) } as Record<K, number>) : {};
}

/** `GET /trades`: the trades the platform sees, newest transaction first, filtered, one page. */
export async function listTrades(ctx: AppContext, platformCode: string, query: TradeFilters) {
  const { page, page_size, cursor, ...bindingFilters } = query;
  const found = await pageOfTrades(
    ctx,
    platformCode,
    inclusiveRange(query),
    {
      client_trade_id: query.client_trade_id,
      trade_state: query.trade_state,
      settlement_state: query.settlement_state,
      party_code: query.party_code,
      reporting_party: query.reporting_party,
      account_label: query.account_label,
      market_identifier_code: query.market_identifier_code,
    },
    { page, pageSize: page_size, cursor },
    bindingFilters,
  );
  return listEnvelope(found.trades.map(tradeView), {
    page: found.page,
    pageSize: page_size,
    count: found.count,
    nextCursor: found.nextCursor,
  });
}

/** `GET /trades/{trade_id}`: live states. A trade the platform can't see is not found, never forbidden. */
export async function findTrade(ctx: AppContext, platformCode: string, tradeId: string) {
  const trade = await getTradeVisibleTo(ctx, platformCode, tradeId);
  if (!trade) throw new NotFoundError(`trade not found: ${tradeId}`);
  return { message: tradeView(trade) };
}
