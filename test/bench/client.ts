import { sign } from '../../lib/http/signature.js';
import { createApiKey, PERMISSION_AREAS, type ApiKeyCredentials } from '../../lib/store/api-keys.js';
import { createPlatform } from '../../lib/store/platforms.js';
import { benchCtx } from './stack.js';

export interface BenchResponse<T = any> {
  status: number;
  body: T;
  text: string;
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
  ) {
    this.secret = Buffer.from(credentials.api_secret, 'base64');
  }

  headersFor(method: string, path: string, text: string | undefined): Record<string, string> {
    let timestamp = benchCtx().clock.nowSeconds();
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

  async request<T = any>(method: string, path: string, body?: unknown, options: { unsigned?: boolean; headers?: Record<string, string> } = {}): Promise<BenchResponse<T>> {
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
    return { status: response.status, body: parsed, text: responseText, ms };
  }

  get<T = any>(path: string) {
    return this.request<T>('GET', path);
  }

  post<T = any>(path: string, body: unknown) {
    return this.request<T>('POST', path, body);
  }
}

export interface BenchPlatform {
  platformCode: string;
  participantCode: string;
  client: SignedClient;
}

/** A platform with a key holding every permission, made through the repositories as the ops CLI does. */
export async function newBenchPlatform(baseUrl: string, name = 'bench platform'): Promise<BenchPlatform> {
  const platform = await createPlatform(benchCtx(), name, '0');
  const credentials = await createApiKey(benchCtx(), platform.platform_code, PERMISSION_AREAS);
  return { platformCode: platform.platform_code, participantCode: platform.participant_code, client: new SignedClient(baseUrl, credentials) };
}

/** Fails loudly: a benchmark that silently measures error responses measures the wrong thing. */
export function expectStatus(response: BenchResponse, expected: number | readonly number[], what: string): void {
  const allowed = typeof expected === 'number' ? [expected] : expected;
  if (!allowed.includes(response.status)) throw new Error(`${what}: expected ${allowed.join('/')}, got ${response.status} ${response.text.slice(0, 500)}`);
}
