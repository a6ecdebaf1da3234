import { randomBytes } from 'node:crypto';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { AppContext } from '../context.js';
import { ConflictError, NotFoundError, ValidationError } from '../domain/errors.js';
import type { EventType } from '../domain/events.js';
import { webhookEndpointCountEntity, webhookEndpointEntity } from './entities/webhook.js';
import { transactWrite } from './table/transactions.js';
import { type TaggedItem } from './table/transaction-items.js';
import { writtenUnlessConditionFailed } from './table/conditional.js';

/** A platform may have this many endpoints: enough for one per environment and use, few enough to fan out cheaply. */
export const MAX_ENDPOINTS_PER_PLATFORM = 20;

/** The old secret keeps signing beside the new one for this long after a rotation. */
export const SECRET_ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export interface StoredEndpoint {
  endpoint_id: string;
  platform_code: string;
  url: string;
  /** null: every event type. */
  event_types: EventType[] | null;
  description: string | null;
  enabled: boolean;
  /** Why the service disabled it (410, five days of failures); null when enabled or disabled by the platform. */
  disabled_reason: string | null;
  disabled_at: number | null;
  created_at: number;
  updated_at: number;
  /** Start of the current run of failed attempts (no success since); null when the last attempt succeeded. */
  failing_since: number | null;
  last_success_at: number | null;
  secretCiphertext: string;
  previousSecretCiphertext: string | null;
  previousSecretExpiresAtMs: number | null;
  /** webhook.test events sent so far (their sequence). */
  tests_sent: number;
}

export function newEndpointId(): string {
  return `we_${randomBytes(12).toString('hex')}`;
}

/** A stored endpoint, parsed; what it lacks (removed by an update, or never set) as null. */
function endpointFrom(item: Readonly<Record<string, unknown>>): StoredEndpoint {
  const stored = webhookEndpointEntity.parse(item);
  return {
    endpoint_id: stored.endpoint_id,
    platform_code: stored.platform_code,
    url: stored.url,
    event_types: stored.event_types ?? null,
    description: stored.description ?? null,
    enabled: stored.enabled,
    disabled_reason: stored.disabled_reason ?? null,
    disabled_at: stored.disabled_at ?? null,
    created_at: stored.created_at,
    updated_at: stored.updated_at,
    failing_since: stored.failing_since ?? null,
    last_success_at: stored.last_success_at ?? null,
    secretCiphertext: stored.secret_ciphertext,
    previousSecretCiphertext: stored.previous_secret_ciphertext ?? null,
    previousSecretExpiresAtMs: stored.previous_secret_expires_at_ms ?? null,
    tests_sent: stored.tests_sent ?? 0,
  };
}

/** The key parts of a stored endpoint. */
const endpointKey = (endpoint: Pick<StoredEndpoint, 'platform_code' | 'endpoint_id'>) => ({
  platform_code: endpoint.platform_code,
  endpoint_id: endpoint.endpoint_id,
});

/** Whether an endpoint wants events of a type. */
export function subscribes(endpoint: StoredEndpoint, type: EventType): boolean {
  return endpoint.event_types === null || endpoint.event_types.includes(type);
}

/**
 * Stores a new endpoint and counts it, in one transaction: the count item's condition keeps a platform at
 * 20 endpoints however many creations race.
 */
export async function putNewEndpoint(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  endpoint: Omit<StoredEndpoint, 'previousSecretCiphertext' | 'previousSecretExpiresAtMs' | 'tests_sent'>,
  alongWith: readonly TaggedItem[] = [],
): Promise<void> {
  const { secretCiphertext, ...fields } = endpoint;
  await transactWrite(ctx, [
    {
      item: webhookEndpointCountEntity.update(
        ctx.tables,
        { platform_code: endpoint.platform_code },
        {
          update: 'SET endpoints = if_not_exists(endpoints, :zero) + :one, #type = :type',
          condition: 'attribute_not_exists(endpoints) OR endpoints < :max',
          names: { '#type': 'type' },
          values: {
            ':zero': 0,
            ':one': 1,
            ':max': MAX_ENDPOINTS_PER_PLATFORM,
            ':type': webhookEndpointCountEntity.type,
          },
        },
      ),
      onConditionFailed: () =>
        new ValidationError([
          `webhook endpoints: a platform may have at most ${MAX_ENDPOINTS_PER_PLATFORM}; delete one first`,
        ]),
    },
    {
      item: webhookEndpointEntity.put(
        ctx.tables,
        { ...fields, secret_ciphertext: secretCiphertext },
        { condition: 'attribute_not_exists(pk)' },
      ),
    },
    ...alongWith,
  ]);
}

export async function getEndpoint(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  platformCode: string,
  endpointId: string,
): Promise<StoredEndpoint | undefined> {
  if (!/^we_[0-9a-f]{24}$/.test(endpointId)) return undefined;
  const out = await ctx.db.send(
    new GetCommand(
      webhookEndpointEntity.get(
        ctx.tables,
        { platform_code: platformCode, endpoint_id: endpointId },
        { consistent: true },
      ),
    ),
  );
  return out.Item ? endpointFrom(out.Item) : undefined;
}

export async function requireEndpoint(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  platformCode: string,
  endpointId: string,
): Promise<StoredEndpoint> {
  const endpoint = await getEndpoint(ctx, platformCode, endpointId);
  if (!endpoint) throw new NotFoundError(`webhook endpoint not found: ${endpointId}`);
  return endpoint;
}

/** A platform's endpoints, oldest first (at most 20: one query of its partition). */
export async function endpointsOfPlatform(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  platformCode: string,
  consistent = true,
): Promise<StoredEndpoint[]> {
  const out = await ctx.db.send(
    new QueryCommand({
      ...webhookEndpointEntity.query(
        ctx.tables,
        'table',
        webhookEndpointEntity.partitionKey({ platform_code: platformCode }),
        { beginsWith: webhookEndpointEntity.sortKeyPrefix({}) },
      ),
      ConsistentRead: consistent,
    }),
  );
  return (out.Items ?? [])
    .map(endpointFrom)
    .sort((a, b) => a.created_at - b.created_at || a.endpoint_id.localeCompare(b.endpoint_id));
}

export interface EndpointChanges {
  url?: string;
  event_types?: EventType[] | null;
  description?: string | null;
  enabled?: boolean;
}

/**
 * Applies the platform's changes. Enabling (again) clears the service's reason for disabling and the failure
 * clock, so a repaired endpoint gets five fresh days.
 */
export async function updateEndpoint(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  platformCode: string,
  endpointId: string,
  changes: EndpointChanges,
  nowMs: number,
): Promise<StoredEndpoint> {
  const sets: string[] = ['updated_at = :now'];
  const removes: string[] = [];
  const values: Record<string, unknown> = { ':now': nowMs };
  if (changes.url !== undefined) {
    sets.push('#url = :url');
    values[':url'] = changes.url;
  }
  if (changes.event_types !== undefined) {
    sets.push('event_types = :types');
    values[':types'] = changes.event_types;
  }
  if (changes.description !== undefined) {
    sets.push('description = :description');
    values[':description'] = changes.description;
  }
  if (changes.enabled !== undefined) {
    sets.push('enabled = :enabled');
    values[':enabled'] = changes.enabled;
    if (changes.enabled) removes.push('disabled_reason', 'disabled_at', 'failing_since');
    else {
      sets.push('disabled_at = :now');
      removes.push('disabled_reason');
    }
  }
  const update = webhookEndpointEntity.update(
    ctx.tables,
    { platform_code: platformCode, endpoint_id: endpointId },
    {
      update: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
      condition: 'attribute_exists(pk)',
      ...(changes.url !== undefined && { names: { '#url': 'url' } }),
      values,
    },
  );
  try {
    const out = await ctx.db.send(new UpdateCommand({ ...update.Update, ReturnValues: 'ALL_NEW' }));
    return endpointFrom(out.Attributes!);
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException)
      throw new NotFoundError(`webhook endpoint not found: ${endpointId}`);
    throw error;
  }
}

/** Deletes an endpoint and uncounts it; its pending deliveries find it gone and stop. */
export async function deleteEndpoint(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  platformCode: string,
  endpointId: string,
): Promise<void> {
  await transactWrite(ctx, [
    {
      item: webhookEndpointEntity.delete(
        ctx.tables,
        { platform_code: platformCode, endpoint_id: endpointId },
        { condition: 'attribute_exists(pk)' },
      ),
      onConditionFailed: () => new NotFoundError(`webhook endpoint not found: ${endpointId}`),
    },
    {
      item: webhookEndpointCountEntity.update(
        ctx.tables,
        { platform_code: platformCode },
        {
          update: 'SET endpoints = endpoints - :one',
          condition: 'endpoints > :zero',
          values: { ':zero': 0, ':one': 1 },
        },
      ),
    },
  ]);
}

/**
 * Makes `newCiphertext` the signing secret and keeps the one it replaces signing beside it until
 * `previousExpiresAtMs`. Conditioned on the secret read before, so two racing rotations can't both keep
 * "the previous" secret: the loser gets 409 and rotates again.
 */
export async function rotateEndpointSecret(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  endpoint: StoredEndpoint,
  newCiphertext: string,
  previousExpiresAtMs: number,
  nowMs: number,
  alongWith: readonly TaggedItem[] = [],
): Promise<void> {
  await transactWrite(ctx, [
    {
      item: webhookEndpointEntity.update(ctx.tables, endpointKey(endpoint), {
        update:
          'SET secret_ciphertext = :new, previous_secret_ciphertext = :old, previous_secret_expires_at_ms = :expires, updated_at = :now',
        condition: 'secret_ciphertext = :old',
        values: {
          ':new': newCiphertext,
          ':old': endpoint.secretCiphertext,
          ':expires': previousExpiresAtMs,
          ':now': nowMs,
        },
      }),
      onConditionFailed: () =>
        new ConflictError(['webhook endpoint: its secret was rotated or the endpoint deleted meanwhile; retry']),
    },
    ...alongWith,
  ]);
}

/** A delivery to the endpoint succeeded: the failure clock stops. */
export async function recordEndpointSuccess(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  endpoint: StoredEndpoint,
  nowMs: number,
): Promise<void> {
  if (endpoint.failing_since === null && endpoint.last_success_at !== null && nowMs - endpoint.last_success_at < 60_000)
    return;
  const update = webhookEndpointEntity.update(ctx.tables, endpointKey(endpoint), {
    update: 'SET last_success_at = :now REMOVE failing_since',
    condition: 'attribute_exists(pk)',
    values: { ':now': nowMs },
  });
  await writtenUnlessConditionFailed(ctx.db.send(new UpdateCommand(update.Update)));
}

/** A delivery attempt failed: the failure clock starts if it isn't running. */
export async function recordEndpointFailure(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  endpoint: StoredEndpoint,
  nowMs: number,
): Promise<number> {
  if (endpoint.failing_since !== null) return endpoint.failing_since;
  const update = webhookEndpointEntity.update(ctx.tables, endpointKey(endpoint), {
    update: 'SET failing_since = if_not_exists(failing_since, :now)',
    condition: 'attribute_exists(pk)',
    values: { ':now': nowMs },
  });
  try {
    const out = await ctx.db.send(new UpdateCommand({ ...update.Update, ReturnValues: 'ALL_NEW' }));
    return endpointFrom(out.Attributes!).failing_since ?? nowMs;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return nowMs;
    throw error;
  }
}

/** The service disables an endpoint (410 Gone, or five days of failures) and says why. */
export async function disableEndpoint(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  endpoint: StoredEndpoint,
  reason: string,
  nowMs: number,
): Promise<void> {
  const update = webhookEndpointEntity.update(ctx.tables, endpointKey(endpoint), {
    update: 'SET enabled = :false, disabled_reason = :reason, disabled_at = :now, updated_at = :now',
    condition: 'enabled = :true',
    values: { ':false': false, ':true': true, ':reason': reason, ':now': nowMs },
  });
  await writtenUnlessConditionFailed(ctx.db.send(new UpdateCommand(update.Update)));
}

/** Records a webhook.test event with the endpoint's test counter moved to its sequence, in one transaction. */
export async function countTestEvent(
  ctx: Pick<AppContext, 'db' | 'tables' | 'logger' | 'retry'>,
  endpoint: StoredEndpoint,
  sequence: number,
  event: TaggedItem,
  alongWith: readonly TaggedItem[] = [],
): Promise<void> {
  await transactWrite(ctx, [
    {
      item: webhookEndpointEntity.update(ctx.tables, endpointKey(endpoint), {
        update: 'SET tests_sent = :sequence',
        condition:
          endpoint.tests_sent === 0
            ? 'attribute_exists(pk) AND attribute_not_exists(tests_sent)'
            : 'tests_sent = :previous',
        values: {
          ':sequence': sequence,
          ...(endpoint.tests_sent !== 0 && { ':previous': endpoint.tests_sent }),
        },
      }),
      onConditionFailed: () =>
        new ConflictError([
          'webhook endpoint: another test was sent at the same moment, or the endpoint was deleted; retry',
        ]),
    },
    event,
    ...alongWith,
  ]);
}
