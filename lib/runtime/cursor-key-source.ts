import { hkdfSync } from 'node:crypto';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { Config } from '../config.js';
import type { AwsClientConfig } from './aws-clients.js';
import type { Deadlines } from './deadline.js';

/**
 * How long a container keeps the key it read from Secrets Manager: one GetSecretValue per container per
 * quarter hour at most, and a changed key reaches every container within that time (cursors issued under the
 * old key are then refused with a 400 that says to start the list again).
 */
export const CURSOR_KEY_MAX_AGE_SECONDS = 900;

/** The HMAC key of list cursors, asked for each time a list seals or opens a cursor. */
export type CursorKey = () => Promise<Buffer>;

export type CursorKeyConfig = AwsClientConfig &
  Pick<Config, 'LIST_CURSOR_SECRET_ARN' | 'LIST_CURSOR_KEY' | 'SECRETS_LOCAL_KEY'>;

/**
 * Where the cursor key comes from. Deployed, `LIST_CURSOR_SECRET_ARN` names the stack's secret: read at run
 * time through Powertools Parameters with its cache, the Secrets Manager client and Powertools loaded by a
 * further `import()` (so `npm start` and the tests never load them). Otherwise `LIST_CURSOR_KEY`, or locally a
 * key derived from the local secrets key (HKDF with its own label, so the two uses never share a key). A
 * missing key fails the list that needs it, not the start. `capture` wraps the client (the tracer's, when on).
 */
export function cursorKeySource(
  config: CursorKeyConfig,
  capture: (client: SecretsManagerClient) => SecretsManagerClient,
  deadlines?: Deadlines,
): CursorKey {
  const secretArn = config.LIST_CURSOR_SECRET_ARN;
  if (secretArn) return secretCursorKey(config, secretArn, capture, deadlines);
  let key: Buffer | undefined;
  return async () => (key ??= configuredCursorKey(config));
}

function configuredCursorKey(config: CursorKeyConfig): Buffer {
  if (config.LIST_CURSOR_KEY) return Buffer.from(config.LIST_CURSOR_KEY, 'utf8');
  if (config.SECRETS_LOCAL_KEY)
    return Buffer.from(
      hkdfSync('sha256', Buffer.from(config.SECRETS_LOCAL_KEY, 'base64'), Buffer.alloc(0), 'list-cursor-v1', 32),
    );
  throw new Error('invalid configuration: set LIST_CURSOR_SECRET_ARN (AWS) or LIST_CURSOR_KEY');
}

/** A failed load is not kept: the next list tries again. The key's bytes are kept while its text is the same. */
function secretCursorKey(
  config: AwsClientConfig,
  secretArn: string,
  capture: (client: SecretsManagerClient) => SecretsManagerClient,
  deadlines: Deadlines | undefined,
): CursorKey {
  let loading: Promise<() => Promise<string>> | undefined;
  let last: { text: string; key: Buffer } | undefined;
  return async () => {
    const read = await (loading ??= import('./cursor-key-secret.js').then(
      (module) => module.secretReader(config, secretArn, CURSOR_KEY_MAX_AGE_SECONDS, capture, deadlines),
      (error: unknown) => {
        loading = undefined;
        throw error;
      },
    ));
    const text = await read();
    if (last?.text !== text) last = { text, key: Buffer.from(text, 'utf8') };
    return last.key;
  };
}
