import { randomUUID } from 'node:crypto';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { personalDataKeys } from '../../lib/domain/events.js';
import { ValidationError } from '../../lib/domain/errors.js';
import { EVENT_RETENTION_MS } from '../../lib/domain/events.js';
import { getEvent } from '../../lib/store/events.js';
import { eventEntity } from '../../lib/store/entities/event.js';
import { idempotencyRecordEntity } from '../../lib/store/entities/window.js';
import { createEndpoint } from '../../lib/webhooks/manage-endpoints.js';
import { PERMISSION_AREAS } from '../../lib/domain/caller.js';
import { startLocalWebhooks, type LocalWebhooks } from '../../infra/local/webhook-runtime.js';
import { deposit } from '../../lib/ledger/deposit.js';
import { ctx, testContext } from '../support/context.js';
import { fund } from '../support/ledger.js';
import { newPlatform, serviceFor, type TestPlatform } from '../support/service.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { itemSizeBytes } from '../support/item-size.js';
import { spareStreamTables } from '../support/tables.js';

/** A caller holding every area, for the use case called directly. */
const fullKey = (platformCode: string) => ({ platformCode, permissions: PERMISSION_AREAS });

/**
 * Retries a tenth of a second apart (jittered +/-20 %), so a failing receiver's next try is due at once: what
 * the retry tests wait for is the attempts themselves, not the schedule (a second apart, the exhausted
 * delivery alone waited 3 s for its retries). The schedule's own values are the domain's unit tests'.
 */
const SCHEDULE = '0.1,0.1,0.1';
process.env.WEBHOOK_RETRY_SCHEDULE_SECONDS = SCHEDULE;
const webhookCtx = testContext({ env: { WEBHOOK_RETRY_SCHEDULE_SECONDS: SCHEDULE } });

let runtime: LocalWebhooks;
const receivers: WebhookReceiver[] = [];

/**
 * The platforms this file's runtime dispatches. DynamoDB Local's stream carries the whole run's events (the
 * files running beside this one book thousands): dispatching them all made this runtime query each of their
 * platforms' endpoints and mark each event dispatched, load on the shared DynamoDB Local that slowed this
 * file and its neighbours. No sweep either: the shared table's undispatched events are the other files'.
 */
const ours = new Set<string>();
const runtimeOptions = {
  pollIntervalMs: 50,
  sweepIntervalMs: 3_600_000,
  acceptsPlatform: (code: string) => ours.has(code),
};

/** A platform of this file, whose events this file's runtime delivers. */
async function ownPlatform(): Promise<TestPlatform> {
  const platform = await newPlatform();
  ours.add(platform.platformCode);
  return platform;
}

async function receiver(): Promise<WebhookReceiver> {
  const started = await new WebhookReceiver().start();
  receivers.push(started);
  return started;
}

beforeAll(async () => {
  runtime = await startLocalWebhooks(webhookCtx, runtimeOptions);
});

afterAll(async () => {
  await runtime.stop();
  await Promise.all(receivers.map((r) => r.stop()));
});

const call = (platform: TestPlatform) => ({
  get: (path: string) => platform.request('GET', path),
  post: (path: string, body?: unknown) => platform.request('POST', path, body ?? {}),
  patch: (path: string, body: unknown) => platform.request('PATCH', path, body),
  delete: (path: string) => platform.request('DELETE', path),
});

async function subscribedPlatform(options: { eventTypes?: string[] } = {}) {
  const platform = await ownPlatform();
  const api = call(platform);
  const target = await receiver();
  const created = await api.post('/webhooks/endpoints', {
    url: target.url,
    ...(options.eventTypes && { event_types: options.eventTypes }),
  });
  expect(created.status).toBe(200);
  return { platform, api, target, endpoint: created.body.message as { id: string; secret: string } };
}

async function transfer(platform: TestPlatform, amount: string) {
  const response = await call(platform).post('/transfers', {
    from_participant_code: platform.participantCode,
    to_participant_code: platform.participantCode,
    to_account_label: 'savings',
    asset: 'USD',
    amount,
  });
  expect(response.status).toBe(201);
  return response.body.message;
}

describe('webhook endpoints', () => {
  it('are created with a whsec_ secret shown once, listed and read without it, changed and deleted', async () => {
    const [platform, otherPlatform] = await Promise.all([ownPlatform(), ownPlatform()]);
    const api = call(platform);
    const created = await api.post('/webhooks/endpoints', {
      url: 'http://127.0.0.1:9/in',
      event_types: ['account_balance.changed'],
      description: 'books',
    });
    expect(created.status).toBe(200);
    const endpoint = created.body.message;
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(endpoint).toMatchObject({
      url: 'http://127.0.0.1:9/in',
      event_types: ['account_balance.changed'],
      description: 'books',
      enabled: true,
    });

    const [listed, read] = await Promise.all([
      api.get('/webhooks/endpoints'),
      api.get(`/webhooks/endpoints/${endpoint.id}`),
    ]);
    expect(listed.body.message).toHaveLength(1);
    expect(listed.text).not.toContain(endpoint.secret);
    expect(read.body.message.secret).toBeUndefined();

    const patched = await api.patch(`/webhooks/endpoints/${endpoint.id}`, {
      enabled: false,
      event_types: ['trade.status_changed'],
    });
    expect(patched.body.message).toMatchObject({ enabled: false, event_types: ['trade.status_changed'] });

    const other = call(otherPlatform);
    const [otherRead, otherDelete] = await Promise.all([
      other.get(`/webhooks/endpoints/${endpoint.id}`),
      other.delete(`/webhooks/endpoints/${endpoint.id}`),
    ]);
    expect(otherRead.status).toBe(404);
    expect(otherDelete.status).toBe(404);

    expect((await api.delete(`/webhooks/endpoints/${endpoint.id}`)).status).toBe(200);
    expect((await api.get(`/webhooks/endpoints/${endpoint.id}`)).status).toBe(404);
  });

  it('keeps the answer of a create or a rotation for X-Request-Id retries only encrypted: the retry gets the same secret, the table never shows it', async () => {
    const platform = await ownPlatform();
    const storedAnswer = async (requestId: string) => {
      const key = idempotencyRecordEntity.key({ platform_code: platform.platformCode, request_id: requestId });
      return JSON.stringify(
        (await ctx.db.send(new GetCommand({ TableName: ctx.tables.ttl, Key: key, ConsistentRead: true }))).Item,
      );
    };
    const createId = randomUUID();
    const body = { url: 'http://127.0.0.1:9/in' };
    const created = await platform.post('/webhooks/endpoints', body, { headers: { 'X-Request-Id': createId } });
    expect(created.status).toBe(200);
    const { id, secret } = created.body.message;
    const retried = await platform.post('/webhooks/endpoints', body, { headers: { 'X-Request-Id': createId } });
    expect(retried.text).toBe(created.text);
    const storedCreate = await storedAnswer(createId);
    expect(storedCreate).toContain('COMPLETED');
    expect(storedCreate).not.toContain(secret);
    expect(storedCreate).not.toContain(secret.slice('whsec_'.length, 20));

    const rotateId = randomUUID();
    const rotated = await platform.post(
      `/webhooks/endpoints/${id}/rotate_secret`,
      {},
      { headers: { 'X-Request-Id': rotateId } },
    );
    expect(rotated.status).toBe(200);
    const newSecret = rotated.body.message.secret;
    expect(newSecret).not.toBe(secret);
    expect(
      (await platform.post(`/webhooks/endpoints/${id}/rotate_secret`, {}, { headers: { 'X-Request-Id': rotateId } }))
        .text,
    ).toBe(rotated.text);
    const storedRotation = await storedAnswer(rotateId);
    expect(storedRotation).toContain('COMPLETED');
    expect(storedRotation).not.toContain(newSecret.slice('whsec_'.length, 20));
  });

  it('refuses bad URLs and unknown event types with 400 naming them, all at once', async () => {
    const api = call(await ownPlatform());
    const urls = [
      undefined,
      'not a url',
      'ftp://example.com/x',
      'http://user:pw@example.com/x',
      `http://example.com/${'a'.repeat(2050)}`,
    ];
    const responses = await Promise.all(
      urls.map((url) => api.post('/webhooks/endpoints', url === undefined ? {} : { url })),
    );
    responses.forEach((response, i) => {
      expect(response.status, String(urls[i])).toBe(400);
      expect(response.body.errors.join(' ')).toMatch(/^url: /);
    });
    const both = await api.post('/webhooks/endpoints', {
      url: 'nope',
      event_types: ['trade.status_changed', 'trade.exploded'],
    });
    expect(both.status).toBe(400);
    expect(both.body.errors).toEqual(
      expect.arrayContaining([expect.stringMatching(/^url: /), expect.stringContaining('trade.exploded')]),
    );
    expect((await api.get('/webhooks/endpoints')).body.message).toEqual([]);
  });

  it('allows 20 endpoints per platform, however many creations race; the 21st is a 400', async () => {
    const api = call(await ownPlatform());
    const responses = await Promise.all(
      Array.from({ length: 24 }, (_, i) => api.post('/webhooks/endpoints', { url: `http://127.0.0.1:9/in/${i}` })),
    );
    expect(responses.filter((r) => r.status === 200)).toHaveLength(20);
    expect(responses.filter((r) => r.status === 400)).toHaveLength(4);
    expect((await api.get('/webhooks/endpoints')).body.message).toHaveLength(20);
  });

  it('refuses loopback, private, link-local and mapped addresses at create when private URLs are not allowed', async () => {
    const strict = testContext({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'false' } });
    const platform = await ownPlatform();
    for (const url of [
      'http://127.0.0.1/x',
      'http://localhost/x',
      'http://10.0.0.1/x',
      'http://169.254.169.254/x',
      'http://[::1]/x',
      'http://[::ffff:127.0.0.1]/x',
      'http://100.64.1.1/x',
      'http://[fd00::1]/x',
    ]) {
      const refused = await createEndpoint(strict, fullKey(platform.platformCode), { url }).catch((error) => error);
      expect(refused, url).toBeInstanceOf(ValidationError);
      expect((refused as ValidationError).errors, url).toEqual([
        'url: points to a private, loopback or otherwise non-public address',
      ]);
    }
    // A name resolving to loopback is refused too.
    const resolvedLoopback = await createEndpoint(
      strict,
      fullKey(platform.platformCode),
      { url: 'http://hooks.test/x' },
      async () => ['127.0.0.1'],
    ).catch((error) => error);
    expect(resolvedLoopback).toBeInstanceOf(ValidationError);
  });
});

describe('webhook delivery', () => {
  it('delivers each account_balance.changed of a transfer once, signed so standardwebhooks verifies it, with webhook-id = event id', async () => {
    const { platform, target, endpoint } = await subscribedPlatform();
    await fund(platform.participantCode, 'USD', '100');
    const booked = await transfer(platform, '40');
    await target.waitFor(
      (received) =>
        received.filter((r) => JSON.parse(r.body).data?.movement?.reference === `transfer:${booked.id}`).length === 2,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const events = target
      .verified(endpoint.secret)
      .filter((event) => event.data.movement.reference === `transfer:${booked.id}`);
    expect(events).toHaveLength(2);
    expect(
      events.map((event) => [event.data.account_label, event.data.movement.change, event.data.balance]).sort(),
    ).toEqual([
      ['general', '-40', '60'],
      ['savings', '40', '40'],
    ]);
    for (const request of target.received) expect(request.headers['webhook-id']).toBe(JSON.parse(request.body).id);
    for (const event of events) {
      expect(event).toMatchObject({
        type: 'account_balance.changed',
        platform_code: platform.platformCode,
        resource: { type: 'account' },
        previous_status: null,
      });
      expect(event.id).toMatch(/^evt_/);
      expect(personalDataKeys(event)).toEqual([]);
    }
    // The deposit before it was the account's first change: the transfer's debit is its second.
    expect(events.find((event) => event.data.account_label === 'general').sequence).toBe(2);
  });

  it('sends webhook.test to the tested endpoint only', async () => {
    const { api, target, endpoint } = await subscribedPlatform({ eventTypes: ['trade.status_changed'] });
    const other = await receiver();
    await api.post('/webhooks/endpoints', { url: other.url });
    const sent = await api.post(`/webhooks/endpoints/${endpoint.id}/test`);
    expect(sent.status).toBe(200);
    await target.waitFor((received) => received.length === 1);
    expect(target.verified(endpoint.secret)[0]).toMatchObject({
      id: sent.body.message.id,
      type: 'webhook.test',
      sequence: 1,
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(other.received).toHaveLength(0);
  });

  it('retries a failing receiver with the same webhook-id until it succeeds, and lists every attempt', async () => {
    const { platform, api, target, endpoint } = await subscribedPlatform();
    target.reply = (_request, index) => (index < 2 ? { status: 500 } : { status: 204 });
    const sent = (await api.post(`/webhooks/endpoints/${endpoint.id}/test`)).body.message;
    await target.waitFor((received) => received.length === 3);
    expect(new Set(target.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([sent.id]));
    expect(target.verified(endpoint.secret)).toHaveLength(3);
    await expect
      .poll(async () => (await api.get(`/webhooks/endpoints/${endpoint.id}/attempts`)).body.message.length)
      .toBe(3);
    const attempts = (await api.get(`/webhooks/endpoints/${endpoint.id}/attempts`)).body.message;
    expect(attempts.map((a: any) => [a.event_id, a.status_code, a.outcome])).toEqual([
      [sent.id, 500, 'failed'],
      [sent.id, 500, 'failed'],
      [sent.id, 204, 'succeeded'],
    ]);
    expect(attempts[0].next_retry_at).toBeGreaterThan(attempts[0].attempted_at);
    expect(attempts[2].next_retry_at).toBeNull();
    void platform;
  });

  it('keeps an exhausted delivery as failed and redelivers it with the same webhook-id', async () => {
    const { api, target, endpoint } = await subscribedPlatform();
    target.reply = () => ({ status: 503 });
    const sent = (await api.post(`/webhooks/endpoints/${endpoint.id}/test`)).body.message;
    // The first try and three retries, the last recorded as failed with no retry planned.
    await target.waitFor((received) => received.length === 4, 30_000);
    const attempts = async () => (await api.get(`/webhooks/endpoints/${endpoint.id}/attempts`)).body.message;
    await expect.poll(async () => (await attempts()).length).toBe(4);
    expect((await attempts()).map((a: any) => [a.status_code, a.outcome, a.next_retry_at === null])).toEqual([
      [503, 'failed', false],
      [503, 'failed', false],
      [503, 'failed', false],
      [503, 'failed', true],
    ]);
    // Several of the schedule's intervals: a fifth try would have come by now.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(target.received).toHaveLength(4);
    target.reply = () => ({ status: 200 });
    expect((await api.post(`/events/${sent.id}/redeliver`)).status).toBe(200);
    await target.waitFor((received) => received.length === 5);
    expect(target.received[4]!.headers['webhook-id']).toBe(sent.id);
    expect(target.verified(endpoint.secret)).toHaveLength(5);
  });

  it('disables an endpoint that answers 410 and sends it nothing more', async () => {
    const { api, target, endpoint } = await subscribedPlatform();
    target.reply = () => ({ status: 410 });
    await api.post(`/webhooks/endpoints/${endpoint.id}/test`);
    await target.waitFor((received) => received.length === 1);
    await expect
      .poll(async () => (await api.get(`/webhooks/endpoints/${endpoint.id}`)).body.message.enabled)
      .toBe(false);
    expect((await api.get('/webhooks/endpoints')).body.message[0].disabled_reason).toMatch(/410/);
    expect((await api.post(`/webhooks/endpoints/${endpoint.id}/test`)).status).toBe(400);
    // Its one attempt plans no retry, and none comes (several of the schedule's intervals later).
    const attempts = (await api.get(`/webhooks/endpoints/${endpoint.id}/attempts`)).body.message;
    expect(attempts.map((a: any) => [a.status_code, a.outcome, a.next_retry_at])).toEqual([[410, 'gone', null]]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(target.received).toHaveLength(1);
  });

  it('waits at least Retry-After before trying again after a 429', async () => {
    const { api, target, endpoint } = await subscribedPlatform();
    // A second, ten times the schedule's interval (0.1 s +/-20 %): the wait is Retry-After's, not the schedule's.
    target.reply = (_request, index) =>
      index === 0 ? { status: 429, headers: { 'Retry-After': '1' } } : { status: 204 };
    await api.post(`/webhooks/endpoints/${endpoint.id}/test`);
    await target.waitFor((received) => received.length === 2, 20_000);
    expect(target.received[1]!.at - target.received[0]!.at).toBeGreaterThanOrEqual(950);
    // The retry was planned a second after the answer: the schedule alone plans it 0.12 s at most after the
    // answer, however long the database calls around the attempts take under load.
    const [first] = (await api.get(`/webhooks/endpoints/${endpoint.id}/attempts`)).body.message;
    expect(first).toMatchObject({ status_code: 429, outcome: 'failed' });
    expect(first.next_retry_at - target.received[0]!.at).toBeGreaterThanOrEqual(950);
  });

  it('does not follow a redirect: a 3xx is a failed attempt', async () => {
    const { api, target, endpoint } = await subscribedPlatform();
    const elsewhere = await receiver();
    target.reply = () => ({ status: 302, headers: { Location: elsewhere.url } });
    await api.post(`/webhooks/endpoints/${endpoint.id}/test`);
    await expect
      .poll(async () => (await api.get(`/webhooks/endpoints/${endpoint.id}/attempts`)).body.message[0]?.status_code)
      .toBe(302);
    expect(elsewhere.received).toHaveLength(0);
  });

  it('signs with the old and the new secret during a rotation', async () => {
    const { api, target, endpoint } = await subscribedPlatform();
    const rotated = await api.post(`/webhooks/endpoints/${endpoint.id}/rotate_secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.message.secret).not.toBe(endpoint.secret);
    expect(rotated.body.message.previous_secret_expires_at - webhookCtx.clock.nowMs()).toBeGreaterThan(23 * 3600_000);
    await api.post(`/webhooks/endpoints/${endpoint.id}/test`);
    await target.waitFor((received) => received.length === 1);
    expect(String(target.received[0]!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(target.verified(endpoint.secret)).toHaveLength(1);
    expect(target.verified(rotated.body.message.secret)).toHaveLength(1);
  });

  it('sends nothing to a disabled or deleted endpoint', async () => {
    const { platform, api, target, endpoint } = await subscribedPlatform();
    const [second, control] = await Promise.all([receiver(), receiver()]);
    const [secondEndpoint] = await Promise.all(
      [second, control].map(async (r) => (await api.post('/webhooks/endpoints', { url: r.url })).body.message),
    );
    await api.patch(`/webhooks/endpoints/${endpoint.id}`, { enabled: false });
    await api.delete(`/webhooks/endpoints/${secondEndpoint.id}`);
    await fund(platform.participantCode, 'USD', '10');
    const booked = await transfer(platform, '1');
    // An enabled endpoint of the platform gets the transfer's two events: they were dispatched, and what the
    // same dispatch queued for the other two would have arrived with them.
    await control.waitFor(
      (received) =>
        received.filter((r) => JSON.parse(r.body).data?.movement?.reference === `transfer:${booked.id}`).length === 2,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(target.received).toHaveLength(0);
    expect(second.received).toHaveLength(0);
  });

  it('refuses at send time a name that resolves to loopback when private URLs are not allowed', async () => {
    const strict = testContext({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'false', WEBHOOK_RETRY_SCHEDULE_SECONDS: '1' } });
    // This file's runtime allows private addresses: the strict one alone delivers this platform's events (it
    // is not one of `ours`, so the file's runtime leaves them alone; it used to be stopped and restarted).
    const [target, platform] = await Promise.all([receiver(), newPlatform()]);
    const strictRuntime = await startLocalWebhooks(strict, {
      pollIntervalMs: 50,
      sweepIntervalMs: 3_600_000,
      resolve: async () => ['127.0.0.1'],
      acceptsPlatform: (code) => code === platform.platformCode,
    });
    try {
      const api = call(platform);
      // Created while the name pointed elsewhere (or did not resolve yet), then re-pointed at loopback.
      const endpoint = (
        await createEndpoint(
          strict,
          fullKey(platform.platformCode),
          { url: target.url.replace('127.0.0.1', 'hooks.test') },
          async () => ['93.184.216.34'],
        )
      ).message;
      await api.post(`/webhooks/endpoints/${endpoint.id}/test`);
      await expect
        .poll(async () => (await api.get(`/webhooks/endpoints/${endpoint.id}/attempts`)).body.message[0]?.outcome, {
          timeout: 10_000,
        })
        .toBe('refused');
      expect(target.received).toHaveLength(0);
    } finally {
      await strictRuntime.stop();
    }
  });

  it('loses nothing when the process dies between the commit and the delivery: the sweep delivers it', async () => {
    // Tables of its own: the sweep dispatches every undispatched event of its table, and the shared test
    // table holds the whole run's (other files run no dispatcher).
    // The worker's spare stream tables, made at the start of the run: one made now would write very slowly.
    const tables = spareStreamTables();
    const sweepCtx = testContext({ tables, env: { WEBHOOK_RETRY_SCHEDULE_SECONDS: SCHEDULE } });
    const home = serviceFor(sweepCtx);
    const platform = await newPlatform({ on: home });
    const target = await receiver();
    const created = await platform.post('/webhooks/endpoints', { url: target.url });
    expect(created.status, created.text).toBe(200);
    const endpoint = created.body.message as { id: string; secret: string };
    // No dispatcher runs while the deposit and the transfer commit: the process died before delivering.
    await deposit(sweepCtx, {
      reference: randomUUID(),
      participantCode: platform.participantCode,
      asset: 'USD',
      amount: '5',
    });
    await transfer(platform, '2');
    const sweeper = await startLocalWebhooks(sweepCtx, { pollIntervalMs: 50, sweepIntervalMs: 60_000 });
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(target.received).toHaveLength(0);
      sweepCtx.clock.advance(2 * 60_000);
      await sweeper.sweep();
      // The deposit's and the transfer's two account_balance.changed.
      await target.waitFor((received) => received.length === 3);
    } finally {
      await sweeper.stop();
    }
    expect(
      target
        .verified(endpoint.secret)
        .map((event) => event.data.movement.type)
        .sort(),
    ).toEqual(['deposit', 'transfer', 'transfer']);
  });
});

describe('the local stream poller', () => {
  it('dispatches batches of at most batchSize, up to `parallelization` at once, and a failed batch again', async () => {
    const platform = await newPlatform();
    const target = await receiver();
    const created = await platform.request('POST', '/webhooks/endpoints', { url: target.url });
    expect(created.status, created.text).toBe(200);
    const sizes: number[] = [];
    let running = 0;
    let mostAtOnce = 0;
    let failedOnce = false;
    // Its own runtime for this platform only (not one of `ours`), each batch slowed so that lanes overlap.
    const lanes = await startLocalWebhooks(webhookCtx, {
      pollIntervalMs: 50,
      sweepIntervalMs: 3_600_000,
      batchSize: 2,
      parallelization: 3,
      acceptsPlatform: (code) => code === platform.platformCode,
      wrapDispatcher: (dispatch) => async (event) => {
        sizes.push(event.Records.length);
        running++;
        mostAtOnce = Math.max(mostAtOnce, running);
        try {
          await new Promise((resolve) => setTimeout(resolve, 200));
          if (!failedOnce) {
            failedOnce = true;
            throw new Error('the first batch fails before dispatching anything');
          }
          return await dispatch(event);
        } finally {
          running--;
        }
      },
    });
    try {
      await fund(platform.participantCode, 'USD', '10');
      const booked = [];
      for (let i = 0; i < 6; i++) booked.push(await transfer(platform, '1'));
      const references = new Set(booked.map((transfer) => `transfer:${transfer.id}`));
      const ofTransfers = () =>
        new Set(
          target.received
            .map((entry) => JSON.parse(entry.body))
            .filter((event) => references.has(event.data?.movement?.reference))
            .map((event) => event.id),
        );
      // Every transfer's two events, the failed batch's among them.
      await target.waitFor(() => ofTransfers().size === 12, 30_000);
    } finally {
      await lanes.stop();
    }
    expect(failedOnce).toBe(true);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(2);
    expect(mostAtOnce).toBeGreaterThan(1);
    expect(mostAtOnce).toBeLessThanOrEqual(3);
  });
});

describe('GET /events', () => {
  it('walks every event once across pages, oldest first, filters by type and resource, and shows none to another platform', async () => {
    const platform = await ownPlatform();
    const api = call(platform);
    await fund(platform.participantCode, 'USD', '100');
    for (let i = 0; i < 3; i++) await transfer(platform, '1');
    const seen: any[] = [];
    let path = '/events?page_size=2';
    for (;;) {
      const page = await api.get(path);
      expect(page.status).toBe(200);
      seen.push(...page.body.message);
      if (!page.body.next_cursor) break;
      path = `/events?page_size=2&cursor=${encodeURIComponent(page.body.next_cursor)}`;
    }
    expect(seen).toHaveLength(7);
    expect(new Set(seen.map((event) => event.id)).size).toBe(7);
    expect(seen.map((event) => event.created_at)).toEqual(
      [...seen.map((event) => event.created_at)].sort((a, b) => a - b),
    );
    expect(personalDataKeys(seen)).toEqual([]);

    const savings = seen.find((event) => event.data.account_label === 'savings');
    const byResource = (await api.get(`/events?resource_id=${savings.resource.id}`)).body.message;
    expect(byResource.map((event: any) => event.sequence)).toEqual([1, 2, 3]);
    expect((await api.get('/events?type=webhook.test')).body.message).toEqual([]);
    expect((await api.get('/events?type=nope')).status).toBe(400);
    expect((await api.get(`/events/${seen[0].id}`)).body.message).toEqual(seen[0]);

    const other = call(await ownPlatform());
    expect((await other.get(`/events/${seen[0].id}`)).status).toBe(404);
    expect((await other.post(`/events/${seen[0].id}/redeliver`)).status).toBe(404);
    expect((await other.get('/events')).body.message).toEqual([]);
  });

  it('keeps each event item of a transfer under 1 KB (2 write units in its transaction, not 4), and shows it until its TTL second', async () => {
    const platform = await ownPlatform();
    const api = call(platform);
    await fund(platform.participantCode, 'USD', '987654321.98', 'operating-reserve');
    const moved = await api.post('/transfers', {
      client_transfer_id: randomUUID(),
      from_participant_code: platform.participantCode,
      from_account_label: 'operating-reserve',
      to_participant_code: platform.participantCode,
      to_account_label: 'customer-payouts',
      asset: 'USD',
      amount: '123456789.12',
    });
    expect(moved.status).toBe(201);
    const events = (await api.get('/events?type=account_balance.changed')).body.message as {
      id: string;
      created_at: number;
    }[];
    const ofTransfer = events.filter(
      (event: any) => event.data.movement.movement_id === moved.body.message.movement_id,
    );
    expect(ofTransfer).toHaveLength(2);
    for (const event of ofTransfer) {
      const stored = await ctx.db.send(
        new GetItemCommand({
          TableName: ctx.tables.main,
          Key: { pk: { S: eventEntity.partitionKey({ event_id: event.id }) }, sk: { S: 'EVENT' } },
        }),
      );
      expect(itemSizeBytes(stored.Item!)).toBeLessThanOrEqual(1024);
      const expiresAtMs = Number(stored.Item!.ttl!.N) * 1000;
      expect(expiresAtMs - event.created_at - EVENT_RETENTION_MS).toBeGreaterThanOrEqual(0);
      expect(expiresAtMs - event.created_at - EVENT_RETENTION_MS).toBeLessThan(1000);
    }
    // Shown until the second its TTL names (DynamoDB deletes it some time after), and from then on not.
    const [first] = ofTransfer;
    const expiresAtMs = Math.ceil((first!.created_at + EVENT_RETENTION_MS) / 1000) * 1000;
    const at = (nowMs: number) => ({
      ...ctx,
      clock: { nowMs: () => nowMs, nowSeconds: () => Math.floor(nowMs / 1000) },
    });
    expect((await getEvent(at(expiresAtMs - 1), platform.platformCode, first!.id))?.envelope.id).toBe(first!.id);
    expect(await getEvent(at(expiresAtMs), platform.platformCode, first!.id)).toBeUndefined();
  });

  it('records one account_balance.changed per account a booking touches (property)', async () => {
    const platform = await ownPlatform();
    const api = call(platform);
    const labels = ['a', 'b', 'c'];
    for (const label of labels) await fund(platform.participantCode, 'USD', '1000', label);
    const before = await countEvents(api);
    let expected = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom(...labels), fc.constantFrom(...labels), fc.integer({ min: 1, max: 5 })), {
          minLength: 1,
          maxLength: 5,
        }),
        async (moves) => {
          for (const [from, to, amount] of moves) {
            const response = await api.post('/transfers', {
              from_participant_code: platform.participantCode,
              from_account_label: from,
              to_participant_code: platform.participantCode,
              to_account_label: to,
              asset: 'USD',
              amount: String(amount),
            });
            // The same account on both sides is refused and records nothing; otherwise two accounts move.
            if (from === to) expect(response.status).toBe(400);
            else {
              expect(response.status).toBe(201);
              expected += 2;
            }
          }
        },
      ),
      { numRuns: 8 },
    );
    expect((await countEvents(api)) - before).toBe(expected);
  });
});

async function countEvents(api: ReturnType<typeof call>): Promise<number> {
  return (await api.get('/events?type=account_balance.changed&page_size=1')).body.count;
}

void ctx;
void Webhook;
