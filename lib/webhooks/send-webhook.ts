import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { DELIVERY_TIMEOUT_MS, type AttemptResult } from '../domain/webhook-delivery.js';
import { ipLiteralOf, isRefusedAddress, type OutboundPolicy } from '../domain/webhook-url.js';

/** Resolves a host name to its addresses (the system resolver; tests pass their own). */
export type ResolveHost = (hostname: string) => Promise<string[]>;

export const systemResolver: ResolveHost = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

interface SendOptions {
  policy: OutboundPolicy;
  resolve?: ResolveHost;
  timeoutMs?: number;
}

interface SendResult {
  result: AttemptResult;
  latencyMs: number;
  /** The address rule refused the destination: nothing was sent. */
  refused: boolean;
}

/** Receivers' answers are read up to this much and dropped: we never store or echo them. */
const MAX_RESPONSE_BYTES = 4096;

/** Why nothing was sent: the name didn't resolve, or an address is refused by the outbound policy. */
interface NotSent {
  error: string;
  refused: boolean;
}

/** The destination's addresses, every one allowed by the outbound policy, or why nothing may be sent. */
async function allowedAddresses(url: URL, options: SendOptions): Promise<{ addresses: string[] } | NotSent> {
  const literal = ipLiteralOf(url);
  let addresses: string[];
  try {
    addresses = literal !== undefined ? [literal] : await (options.resolve ?? systemResolver)(url.hostname);
  } catch {
    return { error: 'could not resolve the host name', refused: false };
  }
  if (addresses.length === 0) return { error: 'could not resolve the host name', refused: false };
  if (!options.policy.allowPrivateAddresses && addresses.some(isRefusedAddress)) {
    return { error: 'destination address not allowed', refused: true };
  }
  return { addresses };
}

/** A `lookup` that answers every query with the checked address, so the connection can go nowhere else. */
function pinnedLookup(pinned: string): LookupFunction {
  const family = pinned.includes(':') ? 6 : 4;
  return (_hostname, lookupOptions, callback) => {
    if ((lookupOptions as { all?: boolean }).all)
      (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [
        { address: pinned, family },
      ]);
    else callback(null, pinned, family);
  };
}

/**
 * Sends the POST and settles once, with the answer's status (its body read up to `MAX_RESPONSE_BYTES` and
 * dropped) or the connection's error; the request's abort signal bounds the whole exchange.
 */
function exchange(
  url: URL,
  requestOptions: RequestOptions,
  body: string,
  timeoutMs: number,
  elapsed: () => number,
): Promise<SendResult> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<SendResult>((resolvePromise) => {
    let settled = false;
    const finish = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      resolvePromise({ result, latencyMs: elapsed(), refused: false });
    };
    const outgoing = send(url, requestOptions, (response) => {
      let received = 0;
      response.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > MAX_RESPONSE_BYTES) response.destroy();
      });
      const done = () =>
        finish({
          kind: 'response',
          statusCode: response.statusCode ?? 0,
          retryAfter: response.headers['retry-after'] ?? null,
        });
      response.on('end', done);
      response.on('close', done);
      response.on('error', done);
    });
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      const timedOut = error.name === 'AbortError' || error.name === 'TimeoutError';
      finish({
        kind: 'error',
        error: timedOut ? `no answer within ${timeoutMs / 1000} s` : `connection failed (${error.code ?? error.name})`,
      });
    });
    outgoing.end(body);
  });
}

/**
 * POSTs one webhook. The name is resolved here and every address checked against the outbound policy; the
 * connection is then made to the checked address (pinned through `lookup`), so a name re-pointed between the
 * check and the connect (DNS rebinding) can't reach a refused address. Redirects are never followed (Node's
 * client doesn't), the whole exchange is bounded by the timeout, and errors never carry the address.
 */
export async function sendWebhook(request: WebhookRequest, options: SendOptions): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const url = new URL(request.url);
  const allowed = await allowedAddresses(url, options);
  if (!('addresses' in allowed)) {
    return { result: { kind: 'error', error: allowed.error }, latencyMs: elapsed(), refused: allowed.refused };
  }
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const requestOptions: RequestOptions = {
    method: 'POST',
    headers: {
      ...request.headers,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(request.body)),
    },
    lookup: pinnedLookup(allowed.addresses[0]!),
    agent: false,
    signal: AbortSignal.timeout(timeoutMs),
  };
  return exchange(url, requestOptions, request.body, timeoutMs, elapsed);
}
