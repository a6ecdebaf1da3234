import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { AppContext } from '../../lib/context.js';
import type { BindApiHandler } from '../../lib/http/api-handler.js';
import { runAs } from './iam/enforcement.js';
import { KeyGate } from './key-gate.js';
import { apiGatewayEvent, singleValueHeaders } from '../../lib/http/apigw-event.js';
import { errorResponse, requestIdFrom } from '../../lib/http/middleware/envelope.js';
import { RateLimitedError } from '../../lib/domain/errors.js';
import { signatureHeaders } from '../../lib/http/middleware/verify-signature.js';
import { routes, type Route } from '../../lib/routes.js';

type LambdaHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

interface CompiledRoute {
  route: Route;
  pattern: RegExp;
  params: string[];
}

function compile(route: Route): CompiledRoute {
  const params: string[] = [];
  const source = route.path.replace(/\{(\w+)\}/g, (_match, name: string) => {
    params.push(name);
    return '([^/]+)';
  });
  return { route, pattern: new RegExp(`^${source}$`), params };
}

const compiled = routes.map(compile);

/** The path a request routes by: a trailing slash routes like the path without it, as on API Gateway. */
function routablePath(url: URL): string {
  const path = url.pathname;
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

/** The routes whose path matches, and among them the one of `method`, with its path's captures. */
function matchRoute(method: string, routable: string) {
  const matches = compiled.map((entry) => ({ entry, match: entry.pattern.exec(routable) })).filter((m) => m.match);
  return { matches, hit: matches.find((m) => m.entry.route.method === method) };
}

/**
 * Each route's handler bound to `ctx`, loaded on first use: the function module's `bind` is what its Lambda
 * `handler` calls with the context it builds from the environment; here it gets the local runtime's (or a
 * test's) context instead.
 */
function handlerLoader(ctx: AppContext): (route: Route) => Promise<LambdaHandler> {
  const handlers = new Map<string, Promise<LambdaHandler>>();
  return (route) => {
    let loaded = handlers.get(route.handler);
    if (!loaded) {
      loaded = import(pathToFileURL(resolve(REPO_ROOT, route.handler)).href).then(
        (module: { bind: BindApiHandler }) => module.bind(ctx) as unknown as LambdaHandler,
      );
      handlers.set(route.handler, loaded);
    }
    return loaded;
  };
}

/**
 * The Lambda context of one invocation, with the function's deployed timeout: its remaining time runs down from
 * the moment the invocation starts, so the handler's deadline (`lib/runtime/deadline.ts`) is what it is on AWS.
 */
function lambdaContext(route: Route, timeoutMs: number): Context {
  const name = route.handler.replace(/\.ts$/, '');
  const endsAtMs = performance.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${name}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, Math.floor(endsAtMs - performance.now())),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** API Gateway refuses payloads over 10 MB before any Lambda runs; so does the local server (the handlers' own limit is lower). */
const GATEWAY_MAX_BODY_BYTES = 10 * 1024 * 1024;

/** The body as text, or null once it grows past the gateway's limit (the rest is drained, not buffered). */
function readBody(request: IncomingMessage): Promise<string | null> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    request.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes <= GATEWAY_MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () =>
      resolveBody(bytes > GATEWAY_MAX_BODY_BYTES ? null : Buffer.concat(chunks).toString('utf8')),
    );
    request.on('error', reject);
  });
}

/** A path segment decoded; a malformed escape (`%E0%A4%A`) is passed on as sent for the handler to refuse. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function send(response: ServerResponse, result: APIGatewayProxyResult): void {
  response.writeHead(result.statusCode, { ...(result.headers as Record<string, string>) });
  response.end(result.body);
}

/**
 * Serves the route table locally the way API Gateway does on AWS: each HTTP request becomes the REST (v1)
 * proxy event of its route, with the raw body, and goes to the same handler module. A trailing slash
 * routes like the path without it.
 */
async function handleHttp(
  loadHandler: (route: Route) => Promise<LambdaHandler>,
  functionTimeoutMs: number,
  ctx: AppContext,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://local');
  const path = url.pathname;
  const routable = routablePath(url);
  const method = request.method ?? 'GET';
  const body = await readBody(request);
  if (body === null) {
    send(response, {
      statusCode: 413,
      headers: { 'Content-Type': 'application/json', 'X-Request-Id': randomUUID() },
      body: JSON.stringify({ message: 'Request Too Long' }),
    });
    return;
  }

  const { matches, hit } = matchRoute(method, routable);
  if (!hit) {
    const status = matches.length ? 405 : 404;
    send(response, {
      statusCode: status,
      headers: { 'Content-Type': 'application/json', 'X-Request-Id': randomUUID() },
      body: JSON.stringify({
        error: status === 405 ? `method ${method} not allowed on ${routable}` : `no route for ${method} ${routable}`,
      }),
    });
    return;
  }
  const pathParameters = Object.fromEntries(
    hit.entry.params.map((name, i) => [name, decodeSegment(hit.match![i + 1]!)]),
  );
  const event = apiGatewayEvent({
    method,
    path,
    resource: hit.entry.route.path,
    pathParameters,
    query: url.search.slice(1),
    // The target as the request line had it: the URL parser above re-encodes some characters of the query.
    rawTarget: request.url ?? path,
    headers: request.headers,
    body,
    sourceIp: request.socket.remoteAddress,
  });
  try {
    const { route } = hit.entry;
    const handler = await loadHandler(route);
    // As the route's function: its AWS calls are authorized against its deployed role (iam/enforcement.ts).
    send(response, await runAs(route.handler, () => handler(event, lambdaContext(route, functionTimeoutMs))));
  } catch (error) {
    ctx.logger.error('local server: handler failed', { error: error as Error });
    send(response, {
      statusCode: 500,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ error: 'Internal Server Error' }),
    });
  }
}

/**
 * A key this process has already refused in its current window (the signature middleware's memory of it,
 * `RateLimiter.knownFull`) is answered here, before its request is read, queued behind its key or turned into
 * an event: the same 429, headers and body as the handler's refusal, for any route that checks signatures. On
 * AWS, WAF turns a flooding key away before API Gateway (docs/api.md, "Rate limits") and the other platforms'
 * requests run in Lambdas of their own; here one event loop serves every platform, and a refusal that went
 * through the whole handler cost the server a third of a millisecond of that loop, which the other platforms
 * waited for (`flood_isolation_ratio`). Like WAF's, these refusals leave no request log line or metric.
 */
function refusedAtTheDoor(ctx: AppContext, key: string, request: IncomingMessage, response: ServerResponse): boolean {
  const full = ctx.rateLimiter.knownFull(key, ctx.clock.nowMs());
  if (!full) return false;
  const route = matchRoute(request.method ?? 'GET', routablePath(new URL(request.url ?? '/', 'http://local'))).hit
    ?.entry.route;
  // Unsigned routes (the API description, health) serve anyone, as the signature middleware lets them.
  if (!route || route.area === null) return false;
  // The middleware answers 403 to missing headers or a stale timestamp before it looks at the key's limit.
  try {
    signatureHeaders(singleValueHeaders(request.headers), ctx.clock.nowSeconds());
  } catch {
    return false;
  }
  const presented = request.headers['x-request-id'];
  send(
    response,
    errorResponse(
      new RateLimitedError(full.retryAfterSeconds, full.policy, full.remaining),
      requestIdFrom(typeof presented === 'string' ? presented : undefined),
    ),
  );
  return true;
}

export interface HttpServerOptions {
  /**
   * At most this many requests of one API key run at once; the rest wait their turn (`KeyGate`). Unset: no
   * limit (tests, whose races must really race).
   */
  requestsPerKey?: number;
  /**
   * Runs around each request's handling (the seeded simulation ties the request's DynamoDB calls to its
   * operation there, through AsyncLocalStorage); `npm start` passes none.
   */
  around?: (request: IncomingMessage, handle: () => Promise<void>) => Promise<void>;
  /** Each invocation's timeout: the API functions' deployed one unless a test shortens it. */
  functionTimeoutMs?: number;
}

/**
 * The API functions' timeout as the stack deploys them, read from the construct that sets it; loaded only when a
 * server needs it (the stack's module brings the CDK library, which tests with a timeout of their own skip).
 */
async function deployedApiTimeoutMs(): Promise<number> {
  const { API_FUNCTION_TIMEOUT } = await import('../service-function.js');
  return API_FUNCTION_TIMEOUT.toMilliseconds();
}

/** Serves the route table on `port` (0: any free one) with every handler bound to `ctx`. */
export async function startHttpServer(
  ctx: AppContext,
  port: number,
  host = '127.0.0.1',
  options: HttpServerOptions = {},
): Promise<{ server: Server; baseUrl: string }> {
  const loadHandler = handlerLoader(ctx);
  const functionTimeoutMs = options.functionTimeoutMs ?? (await deployedApiTimeoutMs());
  const gate = options.requestsPerKey === undefined ? undefined : new KeyGate(options.requestsPerKey);
  const serve = (request: IncomingMessage, response: ServerResponse) => {
    const key = request.headers['x-svc-api-key'];
    if (typeof key === 'string' && refusedAtTheDoor(ctx, key, request, response)) return Promise.resolve();
    const run = () => handleHttp(loadHandler, functionTimeoutMs, ctx, request, response);
    const handle = options.around ? () => options.around!(request, run) : run;
    return gate && typeof key === 'string' ? gate.run(key, handle) : handle();
  };
  const server = createServer((request, response) => {
    serve(request, response).catch((error) => {
      ctx.logger.error('local server: request failed', { error: error as Error });
      if (!response.headersSent) response.writeHead(500, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify({ error: 'Internal Server Error' }));
    });
  });
  server.keepAliveTimeout = 65_000;
  return new Promise((resolveServer, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const address = server.address();
      const actualPort = typeof address === 'object' && address ? address.port : port;
      resolveServer({ server, baseUrl: `http://${host}:${actualPort}` });
    });
  });
}
