import { sign } from '../../lib/http/signature.js';
import type { ApiKeyCredentials } from '../../lib/store/api-keys.js';

/**
 * A platform's signing HTTP client, in a module of its own so a process other than the benchmark's (the
 * two platforms of the isolation scenario, client-process.ts) can use it without loading the bench stack.
 */

export interface BenchResponse<T = any> {
  status: number;
  body: T;
  text: string;
  /** The server's Retry-After, in seconds, when it sent one (a 429 or 503). */
  retryAfterSeconds?: number;
  /** Wall time from sending the request to having read the whole response. */
  ms: number;
}

/** Signs and sends requests for one API key, as a client of the service would. */
export class SignedClient {
  /** A POST may not repeat a signature (replay protection); remembered to sign a repeat differently. */
  private readonly usedSignatures = new Set<string>();
  private readonly secret: Buffer;

  constructor(
    readonly baseUrl: string,
    readonly credentials: ApiKeyCredentials,
    /** The signing clock: the bench stack's, or the wall clock in a process of its own (client-process.ts). */
    private readonly nowSeconds: () => number = () => Math.floor(Date.now() / 1000),
  ) {
    this.secret = Buffer.from(credentials.api_secret, 'base64');
  }

  headersFor(method: string, path: string, text: string | undefined): Record<string, string> {
    let timestamp = this.nowSeconds();
    let signature = sign(this.secret, String(timestamp), method, path, text ?? '{}');
    // Identical requests in one second share a signature; a second back keeps them distinct and in window.
    while (method !== 'GET' && this.usedSignatures.has(signature)) {
      timestamp -= 1;
      signature = sign(this.secret, String(timestamp), method, path, text ?? '{}');
    }
    if (method !== 'GET') {
      this.usedSignatures.add(signature);
      if (this.usedSignatures.size > 50_000) this.usedSignatures.clear();
    }
    return {
      'Content-Type': 'application/json',
      'X-SVC-API-KEY': this.credentials.api_key,
      'X-SVC-PASSPHRASE': this.credentials.passphrase,
      'X-SVC-TIMESTAMP': String(timestamp),
      'X-SVC-SIGNED': signature,
    };
  }

  async request<T = any>(
    method: string,
    path: string,
    body?: unknown,
    options: { unsigned?: boolean; headers?: Record<string, string> } = {},
  ): Promise<BenchResponse<T>> {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const headers = { ...(options.unsigned ? {} : this.headersFor(method, path, text)), ...options.headers };
    const started = performance.now();
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, body: text });
    const responseText = await response.text();
    const ms = performance.now() - started;
    let parsed: any;
    try {
      parsed = JSON.parse(responseText);
    } catch {
      parsed = undefined;
    }
    const retryAfter = response.headers.get('retry-after');
    return {
      status: response.status,
      body: parsed,
      text: responseText,
      ms,
      ...(retryAfter !== null && { retryAfterSeconds: Number(retryAfter) }),
    };
  }

  get<T = any>(path: string) {
    return this.request<T>('GET', path);
  }

  post<T = any>(path: string, body: unknown) {
    return this.request<T>('POST', path, body);
  }
}
