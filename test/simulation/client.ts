import { sign } from '../../lib/http/signature.js';
import type { ApiKeyCredentials } from '../../lib/store/api-keys.js';
import type { Clock } from '../../lib/context.js';

/** One HTTP answer as the client saw it. */
export interface Answer {
  status: number;
  text: string;
  retryAfter: string | null;
  /** The request attempt (1 = first) of its operation. */
  attempt: number;
  /** What was sent, exactly: a resend replays these bytes and signing headers. */
  signed: SignedRequest;
}

/** A request as it went out: method, target, body text and the signing headers (timestamp and signature). */
export interface SignedRequest {
  method: string;
  path: string;
  text: string | undefined;
  timestamp: number;
  headers: Record<string, string>;
}

export interface SendOptions {
  requestId?: string;
  /** Raw body text (a replay sends the exact bytes of the first request). */
  text?: string;
}

/** Header tying a request to its operation and attempt, read by the server's `around` hook (never by a handler). */
export const OPERATION_HEADER = 'x-simulation-operation';

/**
 * A platform's signed client, as a platform's own integration calls the service: the four signing headers,
 * and for a repeat of the very same bytes a timestamp a second earlier (a signature is accepted once).
 */
export class PlatformClient {
  private readonly used = new Set<string>();

  constructor(
    private readonly baseUrl: string,
    readonly credentials: ApiKeyCredentials,
    private readonly clock: Clock,
  ) {}

  async send(
    method: string,
    path: string,
    body: unknown,
    op: number,
    attempt: number,
    options: SendOptions = {},
  ): Promise<Answer> {
    const text = options.text ?? (body === undefined ? undefined : JSON.stringify(body));
    const secret = Buffer.from(this.credentials.api_secret, 'base64');
    let timestamp = this.clock.nowSeconds();
    let signature = sign(secret, String(timestamp), method, path, text ?? '{}');
    while (this.used.has(signature)) {
      timestamp -= 1;
      signature = sign(secret, String(timestamp), method, path, text ?? '{}');
    }
    this.used.add(signature);
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      'X-SVC-API-KEY': this.credentials.api_key,
      'X-SVC-PASSPHRASE': this.credentials.passphrase,
      'X-SVC-TIMESTAMP': String(timestamp),
      'X-SVC-SIGNED': signature,
      [OPERATION_HEADER]: `${op}.${attempt}`,
      ...(options.requestId && { 'X-Request-Id': options.requestId }),
    };
    return this.fetch({ method, path, text, timestamp, headers }, attempt);
  }

  /**
   * The captured bytes sent again as they were (signature and timestamp included: what someone who saw them
   * can send), with the request id `requestId` (undefined: none) and the operation header of this attempt.
   */
  resend(signed: SignedRequest, requestId: string | undefined, op: number, attempt: number): Promise<Answer> {
    const { 'X-Request-Id': _dropped, ...headers } = signed.headers;
    return this.fetch(
      {
        ...signed,
        headers: {
          ...headers,
          [OPERATION_HEADER]: `${op}.${attempt}`,
          ...(requestId !== undefined && { 'X-Request-Id': requestId }),
        },
      },
      attempt,
    );
  }

  private async fetch(signed: SignedRequest, attempt: number): Promise<Answer> {
    const response = await fetch(`${this.baseUrl}${signed.path}`, {
      method: signed.method,
      headers: signed.headers,
      body: signed.text,
    });
    return {
      status: response.status,
      text: await response.text(),
      retryAfter: response.headers.get('retry-after'),
      attempt,
      signed,
    };
  }
}

/**
 * An answer a client must retry: a 5xx, or a 409 that asks for a retry (the first request with its id still
 * running, or another run of it took it over after its lease: the retry gets that run's answer).
 */
export function isTransient(answer: Answer): boolean {
  return (
    answer.status >= 500 || (answer.status === 409 && /still in progress|retry to get its answer/.test(answer.text))
  );
}
