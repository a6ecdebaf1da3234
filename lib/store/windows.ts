import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableNames } from './client.js';
import { ttlKeys } from './keys.js';
import type { TransactItem } from './transactions.js';

/**
 * Claims with a window, in the TTL table. A claim is free when no item exists or when the stored
 * `expires_at_ms` has passed: DynamoDB's TTL deletes late (up to days), so the condition, not the deletion,
 * ends the window.
 */
export const HOURS_72_MS = 72 * 60 * 60 * 1000;

const FREE_OR_EXPIRED = 'attribute_not_exists(pk) OR expires_at_ms <= :now';

function windowAttributes(nowMs: number, windowMs: number) {
  const expiresAtMs = nowMs + windowMs;
  return { expires_at_ms: expiresAtMs, ttl: Math.ceil(expiresAtMs / 1000) };
}

/**
 * The transaction item that claims a client id (client_transfer_id, client_trade_id) for 72 hours. It goes
 * into the same TransactWriteItems as the record it protects, so the record and its claim exist together or
 * not at all. The caller tags it with the domain error its failed condition means (the id is taken).
 */
export function clientIdClaim(kind: string, platformCode: string, clientId: string, nowMs: number, refersTo: string): TransactItem {
  return {
    Put: {
      TableName: tableNames().ttl,
      Item: { pk: ttlKeys.clientId(kind, platformCode, clientId), refers_to: refersTo, ...windowAttributes(nowMs, HOURS_72_MS) },
      ConditionExpression: FREE_OR_EXPIRED,
      ExpressionAttributeValues: { ':now': nowMs },
    },
  };
}

/** Records an accepted signature; false if it was already seen inside its window (a replay). */
export async function claimSignature(signature: string, nowMs: number, windowMs: number): Promise<boolean> {
  try {
    await dynamo().send(
      new PutCommand({
        TableName: tableNames().ttl,
        Item: { pk: ttlKeys.replay(signature), ...windowAttributes(nowMs, windowMs) },
        ConditionExpression: FREE_OR_EXPIRED,
        ExpressionAttributeValues: { ':now': nowMs },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

export interface StoredResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

export type IdempotencyStart =
  | { kind: 'started' }
  | { kind: 'completed'; response: StoredResponse }
  | { kind: 'in_progress' }
  | { kind: 'mismatch' };

/** How long an in-progress record blocks duplicates before a retry may take over (longer than a Lambda run). */
export const IN_PROGRESS_LEASE_MS = 60_000;

/**
 * Starts an idempotent request: one conditional put that succeeds when the key is new, expired, or stuck in
 * progress past its lease (a crashed run) with the same request. Otherwise the existing record says what
 * the duplicate gets.
 */
export async function beginIdempotentRequest(platformCode: string, requestId: string, requestHash: string, nowMs: number): Promise<IdempotencyStart> {
  try {
    await dynamo().send(
      new PutCommand({
        TableName: tableNames().ttl,
        Item: {
          pk: ttlKeys.idempotency(platformCode, requestId),
          status: 'IN_PROGRESS',
          request_hash: requestHash,
          in_progress_until_ms: nowMs + IN_PROGRESS_LEASE_MS,
          ...windowAttributes(nowMs, HOURS_72_MS),
        },
        ConditionExpression: `${FREE_OR_EXPIRED} OR (#status = :inProgress AND in_progress_until_ms <= :now AND request_hash = :hash)`,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':now': nowMs, ':inProgress': 'IN_PROGRESS', ':hash': requestHash },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { kind: 'started' };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const existing = error.Item as Record<string, { S?: string; N?: string }> | undefined;
    if (!existing) return { kind: 'in_progress' };
    if (existing.request_hash?.S !== requestHash) return { kind: 'mismatch' };
    if (existing.status?.S === 'COMPLETED' && existing.response?.S) {
      return { kind: 'completed', response: JSON.parse(existing.response.S) as StoredResponse };
    }
    return { kind: 'in_progress' };
  }
}

export async function completeIdempotentRequest(platformCode: string, requestId: string, response: StoredResponse): Promise<void> {
  await dynamo().send(
    new UpdateCommand({
      TableName: tableNames().ttl,
      Key: { pk: ttlKeys.idempotency(platformCode, requestId) },
      UpdateExpression: 'SET #status = :completed, #response = :response REMOVE in_progress_until_ms',
      ConditionExpression: '#status = :inProgress',
      ExpressionAttributeNames: { '#status': 'status', '#response': 'response' },
      ExpressionAttributeValues: { ':completed': 'COMPLETED', ':inProgress': 'IN_PROGRESS', ':response': JSON.stringify(response) },
    }),
  );
}

/** A failed request releases its key, so the client can retry (a retry of a partial run resumes it). */
export async function abandonIdempotentRequest(platformCode: string, requestId: string): Promise<void> {
  await dynamo().send(
    new DeleteCommand({
      TableName: tableNames().ttl,
      Key: { pk: ttlKeys.idempotency(platformCode, requestId) },
      ConditionExpression: '#status = :inProgress',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':inProgress': 'IN_PROGRESS' },
    }),
  ).catch((error) => {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  });
}
