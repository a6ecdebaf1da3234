import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';

/**
 * Drops the raw HTTP response a `deserialize`-step middleware got from `next`, as a broken connection would.
 * That step runs inside the SDK's deserializer, so a middleware that throws after `next` (a lost answer, a
 * crash after the commit) leaves the response body unread, and Node's agent keeps its socket busy until the
 * server closes it: with a few dozen such faults every socket of the client's pool is held and all of its
 * calls queue for seconds (the simulation spent most of its time there). Destroying the body frees the socket.
 */
export function dropResponse(result: unknown): void {
  const body = (result as { response?: { body?: Partial<Readable> } } | undefined)?.response?.body;
  body?.destroy?.();
}

/**
 * A write that committed but whose answer never arrived: drops the response (`dropResponse`) and returns the
 * error to throw, a `TimeoutError` the SDK retries by sending the very same request again.
 */
export function lostAnswer(result: unknown, message = 'socket hang up'): Error {
  dropResponse(result);
  return Object.assign(new Error(message), { name: 'TimeoutError', $metadata: {} });
}

/**
 * DynamoDB's answer to a throttled BatchGetItem, for a `deserialize`-step middleware to return instead of
 * calling `next`: success, every key it was asked for left unprocessed. Built as the HTTP answer (that step
 * sits below the SDK's deserializer), from the request as the middleware got it.
 */
export function nothingProcessed(args: unknown) {
  const { body } = (args as { request: { body: string | Uint8Array } }).request;
  const sent = JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(body)) as {
    RequestItems: Record<string, unknown>;
  };
  const [table] = Object.keys(sent.RequestItems);
  const answer = JSON.stringify({ Responses: { [table!]: [] }, UnprocessedKeys: sent.RequestItems });
  return {
    response: {
      statusCode: 200,
      reason: 'OK',
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': randomUUID() },
      body: Readable.from([Buffer.from(answer)]),
    },
  };
}
