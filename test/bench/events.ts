import { startLocalWebhooks } from '../../infra/local/webhook-runtime.js';
import type { AppContext } from '../../lib/context.js';
import { WebhookReceiver, type ReceivedWebhook } from '../support/webhook-receiver.js';
import { expectStatus, newBenchPlatform, type BenchPlatform } from './client.js';
import { benchCtx } from './stack.js';
import { percentile } from './stats.js';
import { makeLanes, transferBody } from './transfers.js';

/**
 * Events and webhooks (docs/performance.md, event_delivery_*): the delivery pipeline `npm start` runs (DynamoDB Local's stream
 * -> the dispatcher -> the in-process queue -> the delivery worker, the Lambdas' own code) against a real
 * receiver on 127.0.0.1.
 *
 * - Latency: 1,000 transfers (8 concurrent callers, each on its own accounts) by HTTP; for each of their
 *   account_balance.changed events, the time from its `created_at` (taken just before the booking's
 *   transaction is sent, so this includes the commit) to its arrival at the receiver.
 * - Loss: events to a receiver that answers 500 to 30 % of the attempts at random, with a short retry
 *   schedule (1 s apart, 8 retries): the events the platform has (GET /events) minus the distinct
 *   `webhook-id`s that got a 2xx, less those whose whole schedule failed. An event the receiver refused all
 *   9 times is not lost: the service keeps it as failed for good, counts it (`WebhookDeliveriesFailed`) and
 *   redelivers it on POST /events/{id}/redeliver. At 30 % that happens to one of 1,000 events in about one
 *   run of fifty (0.3^9 each), so it is reported on its own and only an event the service stopped trying
 *   early, or never tried, counts as lost.
 */
export interface EventsResult {
  deliveries: number;
  /** Deliveries that had not arrived after the wait (counted at the wait's length in the percentiles). */
  missing: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  lossEvents: number;
  /** Events never delivered whose retry schedule had not run out: dropped by the service. */
  lost: number;
  /** The attempts the receiver saw of each lost event (all failed), to tell where each one stopped. */
  lostAttempts: number[];
  /** Events the receiver refused on every attempt of the schedule: failed for good, redeliverable. */
  exhausted: number;
  attempts: number;
  failedAttempts: number;
}

const CALLERS = 8;
/** The loss scenario's retries, 1 s apart: `LOSS_RETRIES + 1` attempts in all. */
export const LOSS_RETRIES = 8;
const LOSS_RETRY_SCHEDULE_SECONDS = Array.from({ length: LOSS_RETRIES }, () => 1);
/** How long the latency scenario waits for its last delivery. */
const MISSING_AFTER_MS = 120_000;

type Answered = ReceivedWebhook & { ok?: boolean };

async function subscribe(platform: BenchPlatform, receiver: WebhookReceiver, eventTypes?: string[]): Promise<void> {
  const created = await platform.client.post('/webhooks/endpoints', {
    url: receiver.url,
    ...(eventTypes && { event_types: eventTypes }),
  });
  expectStatus(created, 200, 'POST /webhooks/endpoints');
}

/** `count` transfers by HTTP, `CALLERS` at a time, each caller on its own lane (funded customer -> platform account). */
async function runTransfers(platform: BenchPlatform, count: number): Promise<void> {
  const lanes = await makeLanes(platform, CALLERS);
  let next = 0;
  await Promise.all(
    lanes.map(async (lane) => {
      while (next < count) {
        next += 1;
        // A 503 (DynamoDB Local stalled on a loaded machine) is retried, as a client does after Retry-After.
        for (let tries = 1; ; tries++) {
          const response = await platform.client.post('/transfers', transferBody(lane));
          if (response.status === 503 && tries < 5) {
            await new Promise((resolve) => setTimeout(resolve, 1000));
            continue;
          }
          expectStatus(response, 201, 'POST /transfers');
          break;
        }
      }
    }),
  );
}

/** Every event id GET /events shows the platform. */
async function eventIds(platform: BenchPlatform): Promise<Set<string>> {
  const ids = new Set<string>();
  let path = '/events?page_size=100';
  for (;;) {
    const page = await platform.client.get(path);
    expectStatus(page, 200, 'GET /events');
    for (const event of page.body.message) ids.add(event.id);
    if (!page.body.next_cursor) return ids;
    path = `/events?page_size=100&cursor=${encodeURIComponent(page.body.next_cursor)}`;
  }
}

async function waitFor(what: string, done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`${what}: not done within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function measureEvents(
  baseUrl: string,
  options: { transfers: number; lossTransfers: number },
): Promise<EventsResult> {
  const ctx = benchCtx();
  const receiver = await new WebhookReceiver().start();
  const failing = await new WebhookReceiver().start();
  try {
    // Latency, with the design's retry schedule (a failure would show as a 5 s outlier).
    const latency = await newBenchPlatform(baseUrl, 'bench events');
    const runtime = await startLocalWebhooks(ctx, { pollIntervalMs: 100, sweepIntervalMs: 3_600_000 });
    let samples: number[];
    let missing = 0;
    try {
      await subscribe(latency, receiver, ['account_balance.changed']);
      await runTransfers(latency, options.transfers);
      const transferEvents = () =>
        receiver.received
          .map((entry) => ({ entry, event: JSON.parse(entry.body) }))
          .filter(({ event }) => event.data?.movement?.type === 'transfer');
      // Two accounts per transfer. One that has not arrived after the wait counts at the wait's length (a lower
      // bound): the stream pipeline alone delivers here; on AWS and under `npm start` the sweep would catch it
      // a minute or more later.
      const expectedDeliveries = 2 * options.transfers;
      await waitFor(
        'account_balance.changed of every transfer',
        () => transferEvents().length >= expectedDeliveries,
        MISSING_AFTER_MS,
      ).catch(() => undefined);
      const arrived = transferEvents();
      missing = Math.max(0, expectedDeliveries - arrived.length);
      samples = [
        ...arrived.map(({ entry, event }) => entry.at - (event.created_at as number)),
        ...Array.from({ length: missing }, () => MISSING_AFTER_MS),
      ];
    } finally {
      await runtime.stop();
    }

    // Loss: a receiver failing 30 % of attempts, retries 1 s apart.
    const shortRetries: AppContext = {
      ...ctx,
      config: { ...ctx.config, WEBHOOK_RETRY_SCHEDULE_SECONDS: LOSS_RETRY_SCHEDULE_SECONDS.join(',') },
    };
    // Each request remembers the answer it got, so a 2xx can be told from a failure afterwards.
    failing.reply = (request) => {
      const ok = Math.random() >= 0.3;
      (request as Answered).ok = ok;
      return ok ? { status: 204 } : { status: 500 };
    };
    const loss = await newBenchPlatform(baseUrl, 'bench events lost');
    const lossRuntime = await startLocalWebhooks(shortRetries, { pollIntervalMs: 100, sweepIntervalMs: 3_600_000 });
    let expected: Set<string>;
    const delivered = new Set<string>();
    try {
      await subscribe(loss, failing);
      await runTransfers(loss, options.lossTransfers);
      expected = await eventIds(loss);
      const succeeded = () => {
        delivered.clear();
        failing.received.forEach((entry) => {
          const id = String(entry.headers['webhook-id']);
          if ((entry as Answered).ok) delivered.add(id);
        });
        return [...expected].every((id) => delivered.has(id));
      };
      // Let every retry schedule run out (LOSS_RETRIES + 1 attempts 1 s apart, jittered) before counting what
      // never arrived.
      await waitFor('every event delivered to the failing receiver', succeeded, 60_000).catch(() => undefined);
    } finally {
      await lossRuntime.stop();
    }
    const attemptsOf = new Map<string, number>();
    for (const entry of failing.received) {
      const id = String(entry.headers['webhook-id']);
      attemptsOf.set(id, (attemptsOf.get(id) ?? 0) + 1);
    }
    const undelivered = [...expected].filter((id) => !delivered.has(id)).map((id) => attemptsOf.get(id) ?? 0);
    const lostAttempts = undelivered.filter((attempts) => attempts < LOSS_RETRIES + 1);
    const failedAttempts = failing.received.filter((entry) => !(entry as Answered).ok).length;
    return {
      deliveries: samples.length - missing,
      missing,
      p50Ms: percentile(samples, 50),
      p99Ms: percentile(samples, 99),
      maxMs: Math.max(...samples),
      lossEvents: expected.size,
      lost: lostAttempts.length,
      lostAttempts,
      exhausted: undelivered.length - lostAttempts.length,
      attempts: failing.received.length,
      failedAttempts,
    };
  } finally {
    await Promise.all([receiver.stop(), failing.stop()]);
  }
}
