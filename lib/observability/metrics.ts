import type { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { PaymentStatus } from '../domain/payments.js';
import { METRIC, METRICS_NAMESPACE, SERVICE_NAME } from './metric-names.js';

/**
 * The service's Powertools Metrics, built once at the edge with the context's logger. Metrics are written
 * to stdout in CloudWatch's embedded metric format (EMF): on Lambda, CloudWatch turns those log lines into
 * metrics; under `npm start` they are plain JSON lines.
 *
 * Its own diagnostics go to debug: it warns on every invocation that stored nothing for the edge to
 * publish, which is the normal case here (request metrics are published by the request log itself, and
 * business counts are emitted the moment they happen).
 */
export function serviceMetrics(logger: Logger): Metrics {
  const debug = (...content: unknown[]) => logger.debug(String(content[0]), ...(content.slice(1) as []));
  return new Metrics({
    namespace: METRICS_NAMESPACE,
    serviceName: SERVICE_NAME,
    logger: { debug, info: debug, warn: debug, error: (...content: unknown[]) => logger.error(String(content[0])) },
  });
}

/**
 * Business counts are emitted at once, each in its own EMF line with the `service` dimension (and `status`
 * for payments): mixed into a request's line they would inherit its route dimensions, and the alarms watch
 * the service-wide metric. High-cardinality context (a platform, a trade) goes in as metadata: searchable
 * in the log line, not a dimension.
 */
function emit(
  metrics: Metrics,
  name: string,
  value: number,
  context: { dimensions?: Record<string, string>; metadata?: Record<string, string> } = {},
): void {
  if (value <= 0) return;
  const single = metrics.singleMetric();
  for (const [key, dimension] of Object.entries(context.dimensions ?? {})) single.addDimension(key, dimension);
  for (const [key, data] of Object.entries(context.metadata ?? {})) single.addMetadata(key, data);
  single.addMetric(name, MetricUnit.Count, value);
}

/** How a trade came to be booked: each booking path counts its trades under `TradesAccepted`. */
type TradeBooking =
  | 'reported'
  | 'quote_execution'
  | 'reward'
  | 'award_fund'
  | 'award_distribution'
  | 'convert_withdraw';

/**
 * `count` trades were booked (committed) by one `booking`: one for a report or an execution, a chunk's worth
 * for an award distribution. `reference` is the trade id, or the distribution's id. Trades booked already
 * settled (every path but `reported`) count here only: `TradesSettled` and `TradesDefaulted` are the
 * settlement workflow's outcomes, so they show whether the workflow keeps up.
 */
export function recordTradesAccepted(metrics: Metrics, booking: TradeBooking, count: number, reference: string): void {
  emit(metrics, METRIC.tradesAccepted, count, { metadata: { booking, reference } });
}

/** The settlement workflow settled a trade (its attempt found every obligation met). */
export function recordTradeSettled(metrics: Metrics, tradeId: string): void {
  emit(metrics, METRIC.tradesSettled, 1, { metadata: { trade_id: tradeId } });
}

/** The settlement workflow defaulted a trade (past its deadline with obligations outstanding). */
export function recordTradeDefaulted(metrics: Metrics, tradeId: string): void {
  emit(metrics, METRIC.tradesDefaulted, 1, { metadata: { trade_id: tradeId } });
}

/** A payment reached `status` (created `submitted`, or moved by a bank event). */
export function recordPaymentStatus(metrics: Metrics, status: PaymentStatus, transactionId: string): void {
  emit(metrics, METRIC.paymentStatusChanged, 1, {
    dimensions: { status },
    metadata: { transaction_id: transactionId },
  });
}

/** A webhook delivery exhausted its retries; for the webhook delivery code to call. */
export function recordWebhookDeliveryFailed(metrics: Metrics, platformCode: string, eventId: string): void {
  emit(metrics, METRIC.webhookDeliveriesFailed, 1, { metadata: { platform_code: platformCode, event_id: eventId } });
}

/**
 * A committed balance change left a platform's ACH clearing account below zero (a bank reversal after the
 * purchase was credited). Alarmed on: ops ask the platform to prefund. Call it after the commit, once per
 * change that ends negative.
 */
export function recordNegativeClearingBalance(metrics: Metrics, platformCode: string, balance: string): void {
  emit(metrics, METRIC.negativeClearingBalances, 1, { metadata: { platform_code: platformCode, balance } });
}

/** The settlement sweep's gauge: open trades past their deadline by more than a session (0 included, every run). */
export function recordTradesPastDeadline(metrics: Metrics, count: number): void {
  const single = metrics.singleMetric();
  single.addMetric(METRIC.tradesPastDeadline, MetricUnit.Count, count);
}

/**
 * The ledger check's gauges, every run: discrepancies confirmed by a completed check (0 when clean; nothing
 * when it didn't complete), and whether it completed.
 */
export function recordLedgerCheck(
  metrics: Metrics,
  outcome: { complete: boolean; discrepancies: number },
  metadata: Record<string, string>,
): void {
  const single = metrics.singleMetric();
  for (const [key, value] of Object.entries(metadata)) single.addMetadata(key, value);
  single.addMetric(METRIC.ledgerCheckIncomplete, MetricUnit.Count, outcome.complete ? 0 : 1);
  if (outcome.complete) single.addMetric(METRIC.ledgerDiscrepancies, MetricUnit.Count, outcome.discrepancies);
}
