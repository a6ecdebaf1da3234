import { createApiKey } from '../../lib/store/api-keys.js';
import { PERMISSION_AREAS } from '../../lib/domain/caller.js';
import { createPlatform } from '../../lib/store/platforms.js';
import { SignedClient, type BenchResponse } from './signed-client.js';
import { benchCtx } from './stack.js';

export { SignedClient, type BenchResponse };

export interface BenchPlatform {
  platformCode: string;
  participantCode: string;
  client: SignedClient;
}

/** A platform with a key holding every permission, made through the repositories as the ops CLI does. */
export async function newBenchPlatform(baseUrl: string, name = 'bench platform'): Promise<BenchPlatform> {
  const platform = await createPlatform(benchCtx(), name, '0');
  const credentials = await createApiKey(benchCtx(), platform.platform_code, PERMISSION_AREAS);
  return {
    platformCode: platform.platform_code,
    participantCode: platform.participant_code,
    client: new SignedClient(baseUrl, credentials, () => benchCtx().clock.nowSeconds()),
  };
}

/** Fails loudly: a benchmark that silently measures error responses measures the wrong thing. */
export function expectStatus(response: BenchResponse, expected: number | readonly number[], what: string): void {
  const allowed = typeof expected === 'number' ? [expected] : expected;
  if (!allowed.includes(response.status))
    throw new Error(`${what}: expected ${allowed.join('/')}, got ${response.status} ${response.text.slice(0, 500)}`);
}
