import type { AppContext } from '../context.js';
import { NO_REQUEST_CLAIM, type RequestClaim } from '../store/windows.js';
import { ForbiddenError, ValidationError } from '../domain/errors.js';
import { EVENT_TYPES, isEventType, type EventType } from '../domain/events.js';
import type { AuthContext, PermissionArea } from '../domain/caller.js';
import { requireEventTypes, seesEveryEventType, visibleEventTypes } from '../events/visibility.js';
import { newWebhookSecret } from '../domain/webhook-signing.js';
import { isRefusedAddress, ipLiteralOf, webhookUrlProblems } from '../domain/webhook-url.js';
import { eventItem } from '../store/events.js';
import { encryptSecret } from '../crypto/secret-cipher.js';
import {
  countTestEvent,
  deleteEndpoint,
  endpointsOfPlatform,
  MAX_ENDPOINTS_PER_PLATFORM,
  newEndpointId,
  putNewEndpoint,
  requireEndpoint,
  rotateEndpointSecret,
  SECRET_ROTATION_OVERLAP_MS,
  updateEndpoint,
  type EndpointChanges,
  type StoredEndpoint,
} from '../store/webhook-endpoints.js';
import { outboundPolicy } from './deliver-webhook.js';
import { systemResolver, type ResolveHost } from './send-webhook.js';

/**
 * The platform's own webhook endpoints (permission area `webhooks`). URLs are checked when
 * they are set, and again by the sender at every delivery, since a name can be re-pointed later.
 */
interface EndpointInput {
  url?: unknown;
  event_types?: unknown;
  description?: string | null;
  enabled?: boolean;
}

/** The key asking: its platform and its permission areas. */
type Caller = Pick<AuthContext, 'platformCode' | 'permissions'>;

/** A name's resolution is given this long at create time; a name that doesn't resolve yet is accepted. */
const CREATE_RESOLVE_TIMEOUT_MS = 2_000;

/** The endpoint as the platform sees it: never its secret (shown once, on create and rotate). */
function endpointView(endpoint: StoredEndpoint) {
  return {
    id: endpoint.endpoint_id,
    url: endpoint.url,
    event_types: endpoint.event_types,
    description: endpoint.description,
    enabled: endpoint.enabled,
    disabled_reason: endpoint.disabled_reason,
    disabled_at: endpoint.disabled_at,
    failing_since: endpoint.failing_since,
    last_success_at: endpoint.last_success_at,
    created_at: endpoint.created_at,
    updated_at: endpoint.updated_at,
  };
}

function eventTypeProblems(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return ['event_types: must be a list of event types'];
  if (value.length === 0) return ['event_types: must name at least one event type (leave it out for all)'];
  return value.flatMap((type, i) =>
    typeof type === 'string' && isEventType(type)
      ? []
      : [`event_types[${i}]: unknown event type ${JSON.stringify(type)}`],
  );
}

/** Resolves the URL's name (if it is one) and refuses it when any address it has now is refused. */
async function resolvedAddressProblems(ctx: AppContext, url: string, resolve: ResolveHost): Promise<string[]> {
  const policy = outboundPolicy(ctx.config);
  if (policy.allowPrivateAddresses) return [];
  const parsed = new URL(url);
  if (ipLiteralOf(parsed) !== undefined) return [];
  const addresses = await Promise.race([
    resolve(parsed.hostname).catch(() => [] as string[]),
    new Promise<string[]>((done) => setTimeout(() => done([]), CREATE_RESOLVE_TIMEOUT_MS).unref()),
  ]);
  return addresses.some(isRefusedAddress) ? ['url: points to a private, loopback or otherwise non-public address'] : [];
}

async function validUrl(ctx: AppContext, url: unknown, resolve: ResolveHost): Promise<string[]> {
  const problems = webhookUrlProblems(url, outboundPolicy(ctx.config));
  return problems.length ? problems : resolvedAddressProblems(ctx, url as string, resolve);
}

function uniqueTypes(value: unknown): EventType[] | null {
  return value === undefined || value === null ? null : [...new Set(value as EventType[])];
}

/**
 * An endpoint receives events' data, so the key that decides what it receives (its url, its types) must see
 * every type it subscribes to (`lib/events/visibility.ts`). One without `event_types` receives every type, so
 * only a key that sees them all may leave them out; any other key names the types it may see. 403 otherwise.
 */
function requireSubscription(permissions: readonly PermissionArea[], types: readonly EventType[] | null): void {
  if (types !== null) return requireEventTypes(permissions, types);
  if (seesEveryEventType(permissions)) return;
  try {
    requireEventTypes(permissions, EVENT_TYPES);
  } catch (error) {
    throw new ForbiddenError(
      `${(error as Error).message}: an endpoint without event_types receives every type; list in event_types the types this key may see (${visibleEventTypes(permissions).join(', ') || 'none'})`,
    );
  }
}

export async function createEndpoint(
  ctx: AppContext,
  caller: Caller,
  input: EndpointInput,
  resolve: ResolveHost = systemResolver,
  claim: RequestClaim = NO_REQUEST_CLAIM,
) {
  const { platformCode } = caller;
  const problems = [...(await validUrl(ctx, input.url, resolve)), ...eventTypeProblems(input.event_types)];
  if (problems.length) throw new ValidationError(problems);
  requireSubscription(caller.permissions, uniqueTypes(input.event_types));
  const secret = newWebhookSecret();
  const nowMs = ctx.clock.nowMs();
  const endpoint = {
    endpoint_id: newEndpointId(),
    platform_code: platformCode,
    url: input.url as string,
    event_types: uniqueTypes(input.event_types),
    description: input.description ?? null,
    enabled: true,
    disabled_reason: null,
    disabled_at: null,
    created_at: nowMs,
    updated_at: nowMs,
    failing_since: null,
    last_success_at: null,
    secretCiphertext: await encryptSecret(ctx, secret),
  };
  const message = {
    ...endpointView({ ...endpoint, previousSecretCiphertext: null, previousSecretExpiresAtMs: null, tests_sent: 0 }),
    secret,
  };
  await putNewEndpoint(ctx, endpoint, claim(message));
  return { message };
}

export async function listEndpoints(ctx: AppContext, platformCode: string) {
  const endpoints = (await endpointsOfPlatform(ctx, platformCode)).map(endpointView);
  return {
    message: endpoints,
    page: 1,
    page_size: MAX_ENDPOINTS_PER_PLATFORM,
    total_pages: 1,
    count: endpoints.length,
    next_cursor: null,
  };
}

export async function getEndpointView(ctx: AppContext, platformCode: string, endpointId: string) {
  return { message: endpointView(await requireEndpoint(ctx, platformCode, endpointId)) };
}

export async function changeEndpoint(
  ctx: AppContext,
  caller: Caller,
  endpointId: string,
  input: EndpointInput,
  resolve: ResolveHost = systemResolver,
) {
  const { platformCode } = caller;
  const problems = [
    ...(input.url !== undefined ? await validUrl(ctx, input.url, resolve) : []),
    ...eventTypeProblems(input.event_types),
  ];
  if (problems.length) throw new ValidationError(problems);
  const current = await requireEndpoint(ctx, platformCode, endpointId);
  // Re-pointing an endpoint or changing its types decides who receives what: the key must see all it will
  // receive. Its description and `enabled` are housekeeping any `webhooks` key may do.
  if (input.url !== undefined || input.event_types !== undefined)
    requireSubscription(
      caller.permissions,
      input.event_types !== undefined ? uniqueTypes(input.event_types) : current.event_types,
    );
  const changes: EndpointChanges = {
    ...(input.url !== undefined && { url: input.url as string }),
    ...(input.event_types !== undefined && { event_types: uniqueTypes(input.event_types) }),
    ...(input.description !== undefined && { description: input.description }),
    ...(input.enabled !== undefined && { enabled: input.enabled }),
  };
  return { message: endpointView(await updateEndpoint(ctx, platformCode, endpointId, changes, ctx.clock.nowMs())) };
}

export async function removeEndpoint(ctx: AppContext, platformCode: string, endpointId: string) {
  await requireEndpoint(ctx, platformCode, endpointId);
  await deleteEndpoint(ctx, platformCode, endpointId);
  return { message: { id: endpointId, deleted: true } };
}

/** A new secret, shown once; the one it replaces keeps signing beside it for 24 hours. */
export async function rotateSecret(
  ctx: AppContext,
  platformCode: string,
  endpointId: string,
  claim: RequestClaim = NO_REQUEST_CLAIM,
) {
  const endpoint = await requireEndpoint(ctx, platformCode, endpointId);
  const secret = newWebhookSecret();
  const nowMs = ctx.clock.nowMs();
  const previousExpiresAtMs = nowMs + SECRET_ROTATION_OVERLAP_MS;
  const message = {
    ...endpointView({ ...endpoint, updated_at: nowMs }),
    secret,
    previous_secret_expires_at: previousExpiresAtMs,
  };
  await rotateEndpointSecret(
    ctx,
    endpoint,
    await encryptSecret(ctx, secret),
    previousExpiresAtMs,
    nowMs,
    claim(message),
  );
  return { message };
}

/**
 * Sends a `webhook.test` event to this endpoint only. The event is recorded like any other (listed by
 * GET /events), numbered by the endpoint's own test counter, in one transaction with the counter.
 */
export async function sendTestEvent(
  ctx: AppContext,
  platformCode: string,
  endpointId: string,
  claim: RequestClaim = NO_REQUEST_CLAIM,
) {
  const endpoint = await requireEndpoint(ctx, platformCode, endpointId);
  if (!endpoint.enabled)
    throw new ValidationError([`webhook endpoint ${endpointId}: disabled; enable it before testing`]);
  const nowMs = ctx.clock.nowMs();
  const sequence = endpoint.tests_sent + 1;
  const event = eventItem(
    ctx,
    {
      type: 'webhook.test',
      platformCode,
      resource: { type: 'webhook_endpoint', id: endpointId },
      sequence,
      data: { endpoint_id: endpointId, message: 'a test event sent at your request' },
      onlyEndpointId: endpointId,
    },
    nowMs,
  );
  const message = JSON.parse((event.item.Put!.Item as { body: string }).body);
  await countTestEvent(ctx, endpoint, sequence, event, claim(message));
  return { message };
}
