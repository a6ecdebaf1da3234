import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { CursorKey, CursorKeyConfig } from './cursor-key-source.js';
import type { Deadlines } from './deadline.js';

export type { CursorKey } from './cursor-key-source.js';

/**
 * The cursor key as the configuration names it, built at the edge (`cursor-key-source.ts` says where it comes
 * from). That module is loaded, by an `import()` the bundles split off, on the first list a container
 * serves: a function that never lists carries this stub alone. A failed load is not kept.
 */
export function cursorKeyProvider(
  config: CursorKeyConfig,
  capture: (client: SecretsManagerClient) => SecretsManagerClient,
  deadlines?: Deadlines,
): CursorKey {
  let loading: Promise<CursorKey> | undefined;
  return async () =>
    (
      await (loading ??= import('./cursor-key-source.js').then(
        (source) => source.cursorKeySource(config, capture, deadlines),
        (error: unknown) => {
          loading = undefined;
          throw error;
        },
      ))
    )();
}
