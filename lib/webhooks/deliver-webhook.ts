import type { AppContext } from '../context.js';
import {
  failedLongEnoughToDisable,
  judgeAttempt,
  nextAttemptDelayMs,
  parseRetrySchedule,
  DELIVERY_TIMEOUT_MS,
} from '../domain/webhook-delivery.js';
import { signatureHeader } from '../domain/webhook-signing.js';
import type { OutboundPolicy } from '../domain/webhook-url.js';
import { getEvent } from '../store/events.js';
import { decryptSecret } from '../crypto/secret-cipher.js';
import {
  claimAttempt,
  finishAttempt,
  QUEUED_GRACE_MS,
  type AttemptRecord,
  type ClaimedAttempt,
} from '../store/webhook-deliveries.js';
import {
  disableEndpoint,
  getEndpoint,
  recordEndpointFailure,
  recordEndpointSuccess,
  subscribes,
  type StoredEndpoint,
} from '../store/webhook-endpoints.js';
import { MAX_QUEUE_DELAY_SECONDS, type DeliveryMessage, type DeliveryQueue } from './queue.js';
import { sendWebhook, type ResolveHost } from './send-webhook.js';
import { recordWebhookDeliveryFailed } from '../observability/metrics.js';

/** Longer than a send can take, so a live worker's claim never runs out under it. */
export const LEASE_MS = DELIVERY_TIMEOUT_MS + 45_000;

export interface DeliveryDeps {
  queue: DeliveryQueue;
  /** Tests resolve names themselves (no DNS here); the system resolver otherwise. */
  resolve?: ResolveHost;
  random?: () => number;
}

export function outboundPolicy(config: AppContext['config']): OutboundPolicy {
  return { allowPrivateAddresses: config.WEBHOOK_ALLOW_PRIVATE_URLS, allowHttp: config.WEBHOOK_ALLOW_HTTP };
}

/** Decrypted endpoint secrets are kept a few minutes on the context (a warm worker's), a KMS call each otherwise. */
async function secret(ctx: AppContext, ciphertext: string): Promise<string> {
  const cache = ctx.caches.webhookSecrets;
  const nowMs = ctx.clock.nowMs();
  const cached = cache.get(ciphertext);
  if (cached && cached.untilMs > nowMs) return cached.secret;
  const plain = await decryptSecret(ctx, ciphertext);
  cache.set(ciphertext, { secret: plain, untilMs: nowMs + 5 * 60_000 });
  return plain;
}

/** The secrets that sign now: the current one and, during a rotation's overlap, the one it replaced. */
async function signingSecrets(ctx: AppContext, endpoint: StoredEndpoint, nowMs: number): Promise<string[]> {
  const secrets = [await secret(ctx, endpoint.secretCiphertext)];
  if (
    endpoint.previousSecretCiphertext &&
    endpoint.previousSecretExpiresAtMs !== null &&
    endpoint.previousSecretExpiresAtMs > nowMs
  ) {
    secrets.push(await secret(ctx, endpoint.previousSecretCiphertext));
  }
  return secrets;
}

function unavailable(nowMs: number, reason: string): AttemptRecord {
  return {
    attempted_at: nowMs,
    status_code: null,
    latency_ms: 0,
    error: reason,
    outcome: 'endpoint_unavailable',
    next_retry_at: null,
  };
}

/**
 * One attempt of one delivery (the SQS worker's unit of work): claim it, sign the stored event body, POST
 * it, record the attempt, and decide what comes next (done, retry at a time, or failed for good). A message
 * for a delivery that is not due or already claimed is dropped: whoever holds it, or the sweep, goes on.
 */
export async function deliverOnce(ctx: AppContext, deps: DeliveryDeps, message: DeliveryMessage): Promise<void> {
  const startedMs = ctx.clock.nowMs();
  // The reads go out with the claim rather than after it (one round trip less before the send; wasted only on
  // a message whose claim fails, a duplicate). They are no staler than reads made after the claim: either is
  // read before the send, and the endpoint's state is checked again at the next attempt.
  const endpointRead = (platformCode: string) => getEndpoint(ctx, platformCode, message.endpointId);
  const early = message.platformCode === undefined ? undefined : endpointRead(message.platformCode);
  const eventRead = getEvent(ctx, null, message.eventId);
  // Settled here so that one left unused (a failed claim) is never an unhandled rejection.
  void early?.catch(() => undefined);
  void eventRead.catch(() => undefined);
  const claimed = await claimAttempt(ctx, message.eventId, message.endpointId, startedMs, LEASE_MS);
  if (!claimed) return;
  const { delivery } = claimed;
  const [endpoint, event] = await Promise.all([
    early && message.platformCode === delivery.platform_code ? early : endpointRead(delivery.platform_code),
    eventRead,
  ]);
  if (!event) {
    await finishAttempt(ctx, claimed, unavailable(startedMs, 'event expired'), {
      state: 'failed',
      reason: 'event expired',
    });
    return;
  }
  if (
    !endpoint ||
    !endpoint.enabled ||
    (event.onlyEndpointId === undefined && !subscribes(endpoint, event.envelope.type))
  ) {
    const reason = !endpoint
      ? 'endpoint deleted'
      : !endpoint.enabled
        ? 'endpoint disabled'
        : 'endpoint no longer subscribes to this type';
    await finishAttempt(ctx, claimed, unavailable(startedMs, reason), { state: 'failed', reason });
    return;
  }

  const timestamp = ctx.clock.nowSeconds();
  const headers = {
    'user-agent': 'trading-rewards-settlement-webhooks/1.0',
    'webhook-id': event.envelope.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureHeader(
      await signingSecrets(ctx, endpoint, startedMs),
      event.envelope.id,
      timestamp,
      event.body,
    ),
  };
  const sent = await sendWebhook(
    { url: endpoint.url, headers, body: event.body },
    { policy: outboundPolicy(ctx.config), resolve: deps.resolve },
  );
  const nowMs = ctx.clock.nowMs();
  const verdict = sent.refused ? { outcome: 'failed' as const } : judgeAttempt(sent.result, nowMs);
  const record: AttemptRecord = {
    attempted_at: startedMs,
    status_code: sent.result.kind === 'response' ? sent.result.statusCode : null,
    latency_ms: sent.latencyMs,
    error: sent.result.kind === 'error' ? sent.result.error : null,
    outcome: sent.refused ? 'refused' : verdict.outcome,
    next_retry_at: null,
  };

  if (verdict.outcome === 'succeeded') {
    if (await finishAttempt(ctx, claimed, record, { state: 'succeeded' }))
      await recordEndpointSuccess(ctx, endpoint, nowMs);
    return;
  }
  if (verdict.outcome === 'gone') {
    await finishAttempt(ctx, claimed, record, { state: 'failed', reason: 'the receiver answered 410 Gone' });
    await disableEndpoint(ctx, endpoint, 'the receiver answered 410 Gone', nowMs);
    return;
  }
  await scheduleRetry(ctx, deps, claimed, record, endpoint, verdict.retryAfterSeconds, nowMs);
}

async function scheduleRetry(
  ctx: AppContext,
  deps: DeliveryDeps,
  claimed: ClaimedAttempt,
  record: AttemptRecord,
  endpoint: StoredEndpoint,
  retryAfterSeconds: number | undefined,
  nowMs: number,
): Promise<void> {
  const schedule = parseRetrySchedule(ctx.config.WEBHOOK_RETRY_SCHEDULE_SECONDS);
  const delayMs = nextAttemptDelayMs(schedule, claimed.delivery.round_attempts, retryAfterSeconds, deps.random);
  const failingSince = await recordEndpointFailure(ctx, endpoint, nowMs);
  if (failedLongEnoughToDisable(failingSince, nowMs)) {
    await finishAttempt(ctx, claimed, record, {
      state: 'failed',
      reason: 'endpoint disabled: every attempt failed for 5 days',
    });
    await disableEndpoint(ctx, endpoint, 'every delivery attempt failed for 5 days', nowMs);
    return;
  }
  if (delayMs === undefined) {
    const finished = await finishAttempt(ctx, claimed, record, {
      state: 'failed',
      reason: `no success after ${claimed.delivery.round_attempts} attempts`,
    });
    // Exhausted retries (kept as failed, redeliverable): a count ops watch.
    if (finished) recordWebhookDeliveryFailed(ctx.metrics, claimed.delivery.platform_code, claimed.delivery.event_id);
    return;
  }
  const nextAttemptAtMs = nowMs + delayMs;
  const queued = delayMs <= MAX_QUEUE_DELAY_SECONDS * 1000;
  const finished = await finishAttempt(
    ctx,
    claimed,
    { ...record, next_retry_at: nextAttemptAtMs },
    // A retry the queue holds is due in the index only if the queue loses it; a later one is the sweep's.
    { state: 'scheduled', nextAttemptAtMs, dueAtMs: queued ? nextAttemptAtMs + QUEUED_GRACE_MS : nextAttemptAtMs },
  );
  if (finished && queued)
    await deps.queue.send(
      [
        {
          eventId: claimed.delivery.event_id,
          endpointId: claimed.delivery.endpoint_id,
          platformCode: claimed.delivery.platform_code,
        },
      ],
      delayMs / 1000,
    );
}
