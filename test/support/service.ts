import type { AppContext } from '../../lib/context.js';
import { sign } from '../../lib/http/signature.js';
import { createApiKey, type ApiKeyCredentials } from '../../lib/store/api-keys.js';
import { PERMISSION_AREAS, type PermissionArea } from '../../lib/domain/caller.js';
import { createPlatform } from '../../lib/store/platforms.js';
import { startHttpServer } from '../../infra/local/server.js';
import { assertConformsToContract } from './contract.js';
import { clientWith, ctx, type TestContext, testContext } from './context.js';

/**
 * The invocations' timeout in the tests' servers. The deployed one (28-29 s) is sized for DynamoDB; here every
 * concurrent request shares one process and one DynamoDB Local on a loaded 2-core machine (160 concurrent bookings
 * of one account can take a minute), as the test context's longer SDK timeouts and hot-account wait allow for.
 * Tests of the deadline itself start a server with a short one (deadlines.test.ts).
 */
export const TEST_FUNCTION_TIMEOUT_MS = 180_000;

/** A local HTTP server bound to one context, started in this test file's process on first use and stopped when the file is done. */
export interface TestService {
  ctx: AppContext;
  baseUrl(): Promise<string>;
}

export function serviceFor(serviceCtx: AppContext): TestService {
  let server: ReturnType<typeof startHttpServer> | undefined;
  return {
    ctx: serviceCtx,
    async baseUrl() {
      if (!server) {
        // Started at the first request and kept, idle between requests, until the worker's process ends: the
        // files of a worker share its modules (vitest.config.ts), and with them `service`'s server. (A hook
        // registered here, inside a test or a hook, would never run.)
        server = startHttpServer(serviceCtx, 0, '127.0.0.1', { functionTimeoutMs: TEST_FUNCTION_TIMEOUT_MS });
      }
      return (await server).baseUrl;
    },
  };
}

/** The server of this file's context (`ctx` of `context.ts`), so tests moving `ctx.clock` move its time. */
export const service = serviceFor(ctx);

export function baseUrl(): Promise<string> {
  return service.baseUrl();
}

export interface Response<T = any> {
  status: number;
  headers: Headers;
  text: string;
  body: T;
}

export interface RequestOptions {
  /** Extra or overriding headers (e.g. X-Request-Id). */
  headers?: Record<string, string>;
  /** Sign without the query string (as the spec's sample does) instead of with it. */
  signWithoutQuery?: boolean;
  /** Send no authentication headers at all. */
  unsigned?: boolean;
  /** Raw body text instead of JSON-encoding `body`. */
  rawBody?: string;
  /** Timestamp (seconds) to sign with instead of now. */
  timestamp?: number;
  /** Send to this service (a server bound to another context, e.g. one with a fault-injecting client). */
  via?: TestService;
}

export async function send(
  method: string,
  path: string,
  body?: unknown,
  options: RequestOptions & { credentials?: ApiKeyCredentials; usedSignatures?: Set<string> } = {},
): Promise<Response> {
  const text = options.rawBody ?? (body === undefined ? undefined : JSON.stringify(body));
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (!options.unsigned && options.credentials) {
    const secret = Buffer.from(options.credentials.api_secret, 'base64');
    const signedPath = options.signWithoutQuery ? path.split('?')[0]! : path;
    // Identical requests signed in the same second would share a signature (a replay); step back a
    // second for each repeat, well inside the 60-second window.
    let timestamp = options.timestamp ?? (options.via ?? service).ctx.clock.nowSeconds();
    let signature = sign(secret, String(timestamp), method, signedPath, text ?? '{}');
    while (options.timestamp === undefined && options.usedSignatures?.has(signature)) {
      timestamp -= 1;
      signature = sign(secret, String(timestamp), method, signedPath, text ?? '{}');
    }
    options.usedSignatures?.add(signature);
    Object.assign(headers, {
      'X-SVC-API-KEY': options.credentials.api_key,
      'X-SVC-PASSPHRASE': options.credentials.passphrase,
      'X-SVC-TIMESTAMP': String(timestamp),
      'X-SVC-SIGNED': signature,
    });
  }
  Object.assign(headers, options.headers);
  const response = await fetch(`${await (options.via ?? service).baseUrl()}${path}`, { method, headers, body: text });
  const responseText = await response.text();
  // Every response a test sees must be what the OpenAPI document says (status, headers, body).
  await assertConformsToContract({
    method,
    target: path,
    requestBody: text,
    status: response.status,
    headers: response.headers,
    text: responseText,
  });
  let parsed: unknown;
  try {
    parsed = JSON.parse(responseText);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, text: responseText, body: parsed };
}

export interface TestPlatform {
  platformCode: string;
  participantCode: string;
  credentials: ApiKeyCredentials;
  request<T = any>(method: string, path: string, body?: unknown, options?: RequestOptions): Promise<Response<T>>;
  get<T = any>(path: string, options?: RequestOptions): Promise<Response<T>>;
  post<T = any>(path: string, body?: unknown, options?: RequestOptions): Promise<Response<T>>;
}

/** A new platform with a key holding the given permissions (all by default), and a signed client for it. */
export async function newPlatform(
  options: {
    permissions?: readonly PermissionArea[];
    spreadBps?: string;
    /** The service (and its context's tables) the platform lives in and its requests go to; the file's by default. */
    on?: TestService;
  } = {},
): Promise<TestPlatform> {
  const home = options.on ?? service;
  const platform = await createPlatform(home.ctx, 'test platform', options.spreadBps ?? '0');
  const credentials = await createApiKey(home.ctx, platform.platform_code, options.permissions ?? PERMISSION_AREAS);
  const usedSignatures = new Set<string>();
  const request = (method: string, path: string, body?: unknown, requestOptions: RequestOptions = {}) =>
    send(method, path, body, { via: options.on, ...requestOptions, credentials, usedSignatures });
  return {
    platformCode: platform.platform_code,
    participantCode: platform.participant_code,
    credentials,
    request,
    get: (path, requestOptions) => request('GET', path, undefined, requestOptions),
    post: (path, body, requestOptions) => request('POST', path, body, requestOptions),
  };
}

/** A service instance of its own (a context and a server bound to it) whose client counts every call it sends. */
export interface CountingInstance {
  ctx: TestContext;
  service: TestService;
  /** The calls sent while `work` runs, by command name, in order. */
  counted<T>(work: () => Promise<T>): Promise<{ result: T; calls: string[] }>;
}

export function countingInstance(): CountingInstance {
  let calls: string[] | undefined;
  const context = testContext({
    db: clientWith(
      (next, commandContext) => async (args) => {
        calls?.push(String(commandContext.commandName));
        return next(args);
      },
      'countCalls',
      'initialize',
    ),
  });
  return {
    ctx: context,
    service: serviceFor(context),
    async counted(work) {
      calls = [];
      try {
        const result = await work();
        return { result, calls: [...calls] };
      } finally {
        calls = undefined;
      }
    },
  };
}
