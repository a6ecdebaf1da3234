import { NotFoundError } from '../domain/errors.js';
import type { SettlementState, TradeState } from '../domain/settlement.js';
import { paginate } from '../http/pagination.js';
import { getTradeVisibleTo, listTradesOfPlatform, type Trade } from '../store/trades.js';
import { tradeView } from './trade-view.js';

export interface TradeFilters {
  client_trade_id?: string;
  trade_state?: TradeState;
  /** `'null'` selects trades with no settlement attempted yet, as in the reference API. */
  settlement_state?: Exclude<SettlementState, null> | 'null';
  /** Matches either party. */
  party_code?: string;
  reporting_party?: string;
  account_label?: string;
  market_identifier_code?: string;
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
}

/** Every bound folded into one inclusive range (all must hold), which the index query uses directly. */
function inclusiveRange(filters: TradeFilters): { fromMs?: number; toMs?: number } {
  const gt = filters['transaction_timestamp[gt]'];
  const lt = filters['transaction_timestamp[lt]'];
  const exactly = filters['transaction_timestamp[e]'];
  const lows = [filters['transaction_timestamp[gte]'], filters.transaction_timestamp_from, gt === undefined ? undefined : gt + 1, exactly];
  const highs = [filters['transaction_timestamp[lte]'], filters.transaction_timestamp_to, lt === undefined ? undefined : lt - 1, exactly];
  return { ...bound('fromMs', lows, Math.max), ...bound('toMs', highs, Math.min) };
}

function bound<K extends string>(key: K, values: (number | undefined)[], pick: (...values: number[]) => number): Partial<Record<K, number>> {
  const given = values.filter((v): v is number => v !== undefined);
  return given.length > 0 ? ({ [key]: pick(...given) } as Record<K, number>) : {};
}


function matches(trade: Trade, filters: TradeFilters): boolean {
  if (filters.client_trade_id !== undefined && trade.client_trade_id !== filters.client_trade_id) return false;
  if (filters.trade_state !== undefined && trade.trade_state !== filters.trade_state) return false;
  if (filters.settlement_state !== undefined && (trade.settlement_state ?? 'null') !== filters.settlement_state) return false;
  if (filters.party_code !== undefined && !trade.parties.some((p) => p.participant_code === filters.party_code)) return false;
  if (filters.reporting_party !== undefined && trade.reporting_party !== filters.reporting_party) return false;
  if (filters.account_label !== undefined && !trade.parties.some((p) => p.account_label === filters.account_label)) return false;
  if (filters.market_identifier_code !== undefined && trade.market_identifier_code !== filters.market_identifier_code) return false;
  return true;
}

/** `GET /trades`: the trades the platform sees, newest transaction first, filtered, one page. */
export async function listTrades(platformCode: string, filters: TradeFilters) {
  const trades = await listTradesOfPlatform(platformCode, inclusiveRange(filters));
  return paginate(trades.filter((trade) => matches(trade, filters)).map(tradeView), filters.page, filters.page_size);
}

/** `GET /trades/{trade_id}`: live states. A trade the platform can't see is not found, never forbidden. */
export async function findTrade(platformCode: string, tradeId: string) {
  const trade = await getTradeVisibleTo(platformCode, tradeId);
  if (!trade) throw new NotFoundError(`trade not found: ${tradeId}`);
  return { message: tradeView(trade) };
}
