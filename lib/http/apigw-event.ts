import { randomUUID } from 'node:crypto';
import type { ExactTargetEvent } from './signature.js';

interface HttpRequestParts {
  method: string;
  /** The path as requested, without the query string. */
  path: string;
  /** The route's resource path (`/transfers/{id}`). */
  resource: string;
  pathParameters?: Record<string, string> | null;
  /** The raw query string (without `?`), or empty. */
  query?: string;
  /**
   * The request target exactly as received (the request line's path and query bytes), when the caller has
   * it: the local server does. Kept on the event as `rawPath` and `rawQueryString` (see `ExactTargetEvent`).
   */
  rawTarget?: string;
  headers?: Record<string, string | string[] | undefined>;
  body?: string | null;
  sourceIp?: string;
  stage?: string;
}

/** Headers as the event's `headers` holds them: one value each, a repeated header's values joined by commas. */
export function singleValueHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const single: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) single[name] = Array.isArray(value) ? value.join(',') : value;
  }
  return single;
}

/** The path and query of a request line's target, split at its first `?` (a fragment is never sent). */
function splitTarget(target: string): { rawPath: string; rawQueryString: string } {
  const mark = target.indexOf('?');
  return mark < 0
    ? { rawPath: target, rawQueryString: '' }
    : { rawPath: target.slice(0, mark), rawQueryString: target.slice(mark + 1) };
}

/**
 * The API Gateway REST (v1) proxy event for a request, as the handler gets it on AWS. The local server and
 * the tests both build events here, so every handler runs against one event shape everywhere.
 */
export function apiGatewayEvent(parts: HttpRequestParts): ExactTargetEvent {
  const headers = singleValueHeaders(parts.headers ?? {});
  const multiValueHeaders: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(parts.headers ?? {})) {
    if (value !== undefined) multiValueHeaders[name] = Array.isArray(value) ? value : [value];
  }
  const multiValueQuery: Record<string, string[]> = {};
  for (const [name, value] of new URLSearchParams(parts.query ?? '')) {
    (multiValueQuery[name] ??= []).push(value);
  }
  const hasQuery = Object.keys(multiValueQuery).length > 0;
  const stage = parts.stage ?? 'local';
  const now = Date.now();
  return {
    ...(parts.rawTarget !== undefined && splitTarget(parts.rawTarget)),
    resource: parts.resource,
    path: parts.path,
    httpMethod: parts.method,
    headers,
    multiValueHeaders,
    // API Gateway keeps the last value of a repeated parameter in the single-value map.
    queryStringParameters: hasQuery
      ? Object.fromEntries(Object.entries(multiValueQuery).map(([k, v]) => [k, v[v.length - 1]!]))
      : null,
    multiValueQueryStringParameters: hasQuery ? multiValueQuery : null,
    pathParameters: parts.pathParameters && Object.keys(parts.pathParameters).length ? parts.pathParameters : null,
    stageVariables: null,
    body: parts.body === undefined || parts.body === '' ? null : parts.body,
    isBase64Encoded: false,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      authorizer: null,
      protocol: 'HTTP/1.1',
      httpMethod: parts.method,
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: parts.sourceIp ?? '127.0.0.1',
        user: null,
        userAgent: headers['user-agent'] ?? headers['User-Agent'] ?? null,
        userArn: null,
      },
      path: `/${stage}${parts.path}`,
      stage,
      requestId: randomUUID(),
      requestTimeEpoch: now,
      resourceId: 'local',
      resourcePath: parts.resource,
    },
  };
}
