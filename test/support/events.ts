import { afterAll, beforeAll, expect } from 'vitest';
import { personalDataKeys } from '../../lib/domain/events.js';
import { startLocalWebhooks, type LocalWebhooks } from '../../infra/local/webhook-runtime.js';
import { ctx } from './context.js';
import type { TestPlatform } from './service.js';
import { WebhookReceiver } from './webhook-receiver.js';

/** An event envelope as GET /events and a delivery show it. */
export interface Envelope {
  id: string;
  type: string;
  created_at: number;
  platform_code: string;
  resource: { type: string; id: string };
  sequence: number;
  previous_status: string | null;
  data: Record<string, any>;
}

export interface Subscription {
  platform: TestPlatform;
  receiver: WebhookReceiver;
  secret: string;
}

/**
 * Events as a platform learns of them, for a test file: the file's own webhook runtime (the same dispatcher
 * and worker `npm start` runs, fed by DynamoDB Local's stream) dispatching only the platforms the file
 * subscribed, and a real receiver on 127.0.0.1 per platform whose deliveries are verified with the
 * `standardwebhooks` package. Call at the top level of a test file.
 */
export function eventCapture() {
  const platforms = new Set<string>();
  const receivers: WebhookReceiver[] = [];
  let runtime: LocalWebhooks | undefined;

  beforeAll(async () => {
    // No sweep: other files' undispatched events are theirs (the stream alone delivers this file's).
    runtime = await startLocalWebhooks(ctx, {
      pollIntervalMs: 50,
      sweepIntervalMs: 3_600_000,
      acceptsPlatform: (code) => platforms.has(code),
    });
  });
  afterAll(async () => {
    await runtime?.stop();
    await Promise.all(receivers.map((receiver) => receiver.stop()));
  });

  return {
    /** Subscribes a receiver of its own to every event type of `platform`. */
    async subscribe(platform: TestPlatform): Promise<Subscription> {
      platforms.add(platform.platformCode);
      const receiver = await new WebhookReceiver().start();
      receivers.push(receiver);
      const created = await platform.request('POST', '/webhooks/endpoints', { url: receiver.url });
      expect(created.status, created.text).toBe(200);
      return { platform, receiver, secret: created.body.message.secret };
    },

    /**
     * Waits until the receiver holds `count` verified deliveries of events matching `match`, then checks that
     * GET /events lists exactly those events (same envelopes), that each was delivered once with
     * `webhook-id` = its id, and that none carries personal data. Returns them oldest first.
     */
    async received(
      subscription: Subscription,
      match: (event: Envelope) => boolean,
      count: number,
    ): Promise<Envelope[]> {
      const { receiver, secret, platform } = subscription;
      const verified = () => (receiver.verified(secret) as Envelope[]).filter(match);
      await receiver.waitFor(() => verified().length >= count, 30_000);
      // A moment for any duplicate to show up.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const delivered = verified().sort((a, b) => a.created_at - b.created_at || a.sequence - b.sequence);
      expect(delivered).toHaveLength(count);
      expect(new Set(delivered.map((event) => event.id)).size).toBe(count);
      for (const event of delivered) {
        expect(receiver.forEvent(event.id)).toHaveLength(1);
        expect(event.platform_code).toBe(platform.platformCode);
        expect(personalDataKeys(event)).toEqual([]);
      }
      const listed = await listEvents(platform);
      const byId = new Map(listed.map((event) => [event.id, event]));
      for (const event of delivered) expect(byId.get(event.id)).toEqual(event);
      expect(
        listed
          .filter(match)
          .map((event) => event.id)
          .sort(),
      ).toEqual(delivered.map((event) => event.id).sort());
      return delivered;
    },
  };
}

/** Every event GET /events shows the platform, walking the cursor to the end. */
export async function listEvents(platform: TestPlatform, query = ''): Promise<Envelope[]> {
  const events: Envelope[] = [];
  let path = `/events?page_size=100${query}`;
  for (;;) {
    const page = await platform.get(path);
    expect(page.status, page.text).toBe(200);
    events.push(...page.body.message);
    if (!page.body.next_cursor) return events;
    path = `/events?page_size=100${query}&cursor=${encodeURIComponent(page.body.next_cursor)}`;
  }
}
