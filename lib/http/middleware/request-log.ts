import type { Logger } from '@aws-lambda-powertools/logger';
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type middy from '@middy/core';
import { AuthenticationError } from '../../domain/errors.js';
import { METRIC, REQUEST_DIMENSION_SETS } from '../../observability/metric-names.js';
import type { ServiceRequest } from '../types.js';

interface RequestLogLine {
  request_id: string;
  /** The signing platform; absent when the request was refused before its signature was verified. */
  platform_code?: string;
  route: string;
  status: number;
  latency_ms: number;
  /** The error class behind a non-2xx answer (`ValidationError`, `ForbiddenError`, ...). */
  error_kind?: string;
  /** Why authentication failed (the client hears one message for every reason; ops need the reason). */
  auth_failure?: string;
}

/**
 * One JSON line and one set of request metrics per API request, whatever the outcome:
 * success, a 4xx such as a 403, or a 500. A middy plugin rather than a middleware: `requestEnd` runs after
 * the whole chain, including when a middleware answered early (an idempotent replay), so it always sees the
 * final response. The line carries identifiers, the route, status, latency and the error's class; never a
 * header, a body or a client-facing message, so no secret, passphrase or personal data can reach it. For a
 * 5xx it adds the error itself (message and stack), the only detail ops get of an internal error.
 *
 * Metrics are published here, per request, rather than by the Lambda edge: the local server runs many
 * requests through one handler, and stored metrics of two requests would merge their route dimensions.
 */
export function requestLog(ctx: { logger: Logger; metrics: Metrics }): middy.PluginObject {
  const startedAtMs = new WeakMap<object, number>();
  const requestStart = (request: ServiceRequest) => {
    startedAtMs.set(request, performance.now());
  };
  return {
    // middy passes the request to requestStart too; its typings leave the parameter out.
    requestStart: requestStart as unknown as () => void,
    requestEnd: (request) => {
      const { event, context, response, error } = request as ServiceRequest;
      const status = response?.statusCode ?? 500;
      const started = startedAtMs.get(request);
      const line: RequestLogLine = {
        request_id: context.svc?.requestId ?? 'unknown',
        ...(context.svc?.auth && { platform_code: context.svc.auth.platformCode }),
        route: `${event.httpMethod} ${event.resource}`,
        status,
        latency_ms: started === undefined ? 0 : Math.round(performance.now() - started),
        ...(error && { error_kind: error.name }),
        ...(error instanceof AuthenticationError && { auth_failure: error.reason }),
      };
      if (status >= 500) ctx.logger.error('request', { ...line, ...(error && { error }) });
      // A failed authentication may be someone guessing: worth a warning, where a client's mistake is not.
      else if (line.auth_failure) ctx.logger.warn('request', { ...line });
      else ctx.logger.info('request', { ...line });

      const dimensions = { route: line.route, status_class: `${Math.floor(status / 100)}xx` };
      for (const set of REQUEST_DIMENSION_SETS)
        ctx.metrics.addDimensions(Object.fromEntries(set.map((name) => [name, dimensions[name]])));
      ctx.metrics.addMetric(METRIC.requests, MetricUnit.Count, 1);
      ctx.metrics.addMetric(METRIC.serverErrors, MetricUnit.Count, status >= 500 ? 1 : 0);
      ctx.metrics.addMetric(METRIC.latency, MetricUnit.Milliseconds, line.latency_ms);
      ctx.metrics.publishStoredMetrics();
    },
  };
}
