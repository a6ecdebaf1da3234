import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
