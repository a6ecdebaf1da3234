import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startHttpServer } from '../../infra/local/server.js';
import { testContext } from '../support/context.js';
import { newPlatform, serviceFor, type TestPlatform, type TestService } from '../support/service.js';

/**
 * A DynamoDB endpoint that accepts connections and never answers: what a stalled connection looks like.
 * Without request timeouts on the SDK client a request waits on it for the SDK's own defaults (tens of
 * seconds); with them it answers 503 with Retry-After after about attempts x request timeout.
 */
describe('a stalled DynamoDB', () => {
  let stalled: Server;
  const sockets = new Set<Socket>();
  let platform: TestPlatform;
  /** A server whose context reaches DynamoDB through the stalled endpoint; the platform is made beforehand. */
  let via: TestService;

  beforeAll(async () => {
    platform = await newPlatform();
    stalled = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
    const { port } = stalled.address() as { port: number };
    // The production client, built by the context from configuration that points it at the stalled endpoint.
    via = serviceFor(
      testContext({
        env: { DYNAMODB_ENDPOINT: `http://127.0.0.1:${port}`, AWS_REQUEST_TIMEOUT_MS: '300', AWS_MAX_ATTEMPTS: '2' },
      }),
    );
  });

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => stalled.close(resolve));
  });

  it('answers a signed read 503 with Retry-After within the configured timeouts, not after the SDK defaults', async () => {
    const started = Date.now();
    const response = await platform.get('/accounts', { via });
    const elapsedMs = Date.now() - started;
    expect(response.status).toBe(503);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(response.body).toEqual({ errors: [expect.any(String)] });
    // 2 attempts x 300 ms plus backoff; the bound is loose for a noisy machine and far below a hang.
    expect(elapsedMs).toBeLessThan(10_000);
  });

  it('answers a booking 503 too, and nothing about the stall reaches the client', async () => {
    const body = {
      from_participant_code: platform.participantCode,
      to_participant_code: platform.participantCode,
      to_account_label: 'savings',
      asset: 'USD',
      amount: '1',
    };
    const response = await platform.post('/transfers', body, { via });
    expect(response.status).toBe(503);
    expect(response.text).not.toMatch(/smithy|timed out|127\.0\.0\.1/);
  });
});

/**
 * The same stall with the SDK's timeouts far longer than the invocation (the test context's: 30 s a request, 6
 * attempts): only the invocation's deadline (lib/runtime/deadline.ts) can end the wait. The local server gives the
 * handler a short function timeout, so its Lambda context has little remaining time.
 */
describe('a stalled DynamoDB with little time left in the invocation', () => {
  let stalled: Server;
  const sockets = new Set<Socket>();
  /** Connections holding a request the server never answers (an idle pooled connection is not one). */
  const waiting = new Set<Socket>();
  let platform: TestPlatform;
  let via: TestService;
  let server: ReturnType<typeof startHttpServer> | undefined;

  beforeAll(async () => {
    platform = await newPlatform();
    stalled = createServer((socket) => {
      sockets.add(socket);
      socket.on('data', () => waiting.add(socket));
      socket.on('error', () => {});
      socket.on('close', () => {
        sockets.delete(socket);
        waiting.delete(socket);
      });
    });
    await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
    const { port } = stalled.address() as { port: number };
    const serviceCtx = testContext({ env: { DYNAMODB_ENDPOINT: `http://127.0.0.1:${port}` } });
    server = startHttpServer(serviceCtx, 0, '127.0.0.1', { functionTimeoutMs: 4000 });
    const started = server;
    via = { ctx: serviceCtx, baseUrl: async () => (await started).baseUrl };
  });

  // Here, not in the beforeAll: a hook registered inside another hook never runs.
  afterAll(async () => {
    if (server) {
      const { server: http } = await server;
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    }
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => stalled.close(resolve));
  });

  it('answers a signed read 503 with Retry-After at the deadline and abandons the stalled calls', async () => {
    const response = await platform.get('/accounts', { via });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(response.body).toEqual({ errors: ['the request ran out of time; retry shortly'] });
    // The stalled request was aborted at the deadline, not left open for the SDK's 30 s request timeout.
    await vi.waitFor(() => expect(waiting.size).toBe(0));
  });
});
