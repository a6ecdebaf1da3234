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

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface SendOptions {
  policy: OutboundPolicy;
  resolve?: ResolveHost;
  timeoutMs?: number;
}

export interface SendResult {
  result: AttemptResult;
  latencyMs: number;
  /** The address rule refused the destination: nothing was sent. */
  refused: boolean;
}

/** Receivers' answers are read up to this much and dropped: we never store or echo them. */
const MAX_RESPONSE_BYTES = 4096;

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
  const literal = ipLiteralOf(url);
  let addresses: string[];
  try {
    addresses = literal !== undefined ? [literal] : await (options.resolve ?? systemResolver)(url.hostname);
  } catch {
    return {
      result: { kind: 'error', error: 'could not resolve the host name' },
      latencyMs: elapsed(),
      refused: false,
    };
  }
  if (addresses.length === 0)
    return {
      result: { kind: 'error', error: 'could not resolve the host name' },
      latencyMs: elapsed(),
      refused: false,
    };
  if (!options.policy.allowPrivateAddresses && addresses.some(isRefusedAddress)) {
    return { result: { kind: 'error', error: 'destination address not allowed' }, latencyMs: elapsed(), refused: true };
  }
  const pinned = addresses[0]!;
  const family = pinned.includes(':') ? 6 : 4;
  const lookup: LookupFunction = (_hostname, lookupOptions, callback) => {
    if ((lookupOptions as { all?: boolean }).all)
      (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [
        { address: pinned, family },
      ]);
    else callback(null, pinned, family);
  };
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const requestOptions: RequestOptions = {
    method: 'POST',
    headers: {
      ...request.headers,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(request.body)),
    },
    lookup,
    agent: false,
    signal: AbortSignal.timeout(timeoutMs),
  };
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
    outgoing.end(request.body);
  });
}
