import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableNames } from './client.js';
import { ttlKeys } from './keys.js';
import { readInteger } from './numbers.js';
import type { TaggedItem } from './transactions.js';
import { clientIdClaim } from './windows.js';

/**
 * A request's claim on what it booked, written in the booking's own transaction. The idempotency
 * middleware answers duplicates while the first run is alive; but a run that dies after its transaction
 * commits and before its response is stored leaves a request that a retry (once the middleware's lease
 * lapses) would book again. The claim stops that: the retry's transaction fails on it, and the retry
 * answers with what the first run booked. It lives in the TTL table with the same 72-hour window as the
 * idempotency record, so a request id reused after that is a new request there and here alike.
 */

/** The claim was already taken: this request was booked by an earlier run. */
export class RequestAlreadyBookedError extends Error {}

export function requestClaimItem(kind: string, platformCode: string, requestId: string, bookedId: string, nowMs: number): TaggedItem {
  return {
    item: clientIdClaim(`request_${kind}`, platformCode, requestId, nowMs, bookedId),
    onConditionFailed: () => new RequestAlreadyBookedError(`${kind} request ${requestId} was already booked`),
  };
}

/** What an earlier run of this request booked (the id it claimed with), if its claim is still in its window. */
export async function bookedByRequest(kind: string, platformCode: string, requestId: string, nowMs: number): Promise<string | undefined> {
  const out = await dynamo().send(
    new GetCommand({ TableName: tableNames().ttl, Key: { pk: ttlKeys.clientId(`request_${kind}`, platformCode, requestId) }, ConsistentRead: true }),
  );
  const item = out.Item;
  // TTL deletes late: an expired claim still in the table is no claim.
  if (!item || readInteger(item.expires_at_ms) <= nowMs) return undefined;
  return item.refers_to as string;
}
