/**
 * The service's CloudWatch metrics, named once: the functions emit them (embedded metric format, through
 * Powertools Metrics) and the stack alarms and graphs them, so a renamed metric can't leave an alarm watching
 * nothing. Every metric carries the `service` dimension; the request metrics also come per route and per
 * status class (see `REQUEST_DIMENSION_SETS`).
 */
export const METRICS_NAMESPACE = 'TradingSettlement';
export const SERVICE_NAME = 'trading-settlement';

export const METRIC = {
  /** One per API request, with `route` and `status_class` (2xx, 4xx, 5xx). */
  requests: 'Requests',
  /** One per API request answered 5xx (also counted in `Requests`). */
  serverErrors: 'ServerErrors',
  /** Milliseconds from the request entering the handler to its response. */
  latency: 'Latency',
  /** Trades booked, on every booking path (`booking` in the line's metadata: reported, quote_execution, reward, ...). */
  tradesAccepted: 'TradesAccepted',
  /** Trades the settlement workflow settled (trades booked already settled count in `TradesAccepted` only). */
  tradesSettled: 'TradesSettled',
  /** Trades the settlement workflow defaulted. */
  tradesDefaulted: 'TradesDefaulted',
  /** Payments moved to a status, with a `status` dimension. */
  paymentStatusChanged: 'PaymentStatusChanged',
  webhookDeliveriesFailed: 'WebhookDeliveriesFailed',
  /** A balance change left a platform's ACH clearing account below zero (a bank reversal after the credit). */
  negativeClearingBalances: 'NegativeClearingBalances',
  /** Emitted by every settlement sweep: open trades past their deadline by more than a settlement session. */
  tradesPastDeadline: 'TradesPastDeadline',
  /** Emitted by every completed ledger check: discrepancies it confirmed (0 included). */
  ledgerDiscrepancies: 'LedgerDiscrepancies',
  /** Emitted by every ledger check: 1 when it ran out of time before the end of its scan. */
  ledgerCheckIncomplete: 'LedgerCheckIncomplete',
} as const;

/** The dimension sets of the request metrics, besides `service`: overall by class, by route, by route and class. */
export const REQUEST_DIMENSION_SETS = [['status_class'], ['route'], ['route', 'status_class']] as const;
