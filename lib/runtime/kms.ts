import type { KMSClient } from '@aws-sdk/client-kms';
import { awsRequestHandler, type AwsClientConfig } from './aws-clients.js';
import type { Deadlines } from './deadline.js';

/** KMS encryption with the service's key, as the secrets below use it. */
export interface KmsCipher {
  encrypt(keyId: string, plaintext: Uint8Array): Promise<Uint8Array>;
  decrypt(ciphertext: Uint8Array): Promise<Uint8Array>;
}

/**
 * KMS through a client made, and its package loaded (an `import()` the bundles split off), on first use: a
 * function that never encrypts or decrypts a secret never loads the KMS client, and one that does loads it
 * once, with the same timeouts, attempts and deadline as every client (`aws-clients.ts`). `capture` wraps the client (the
 * tracer's, when tracing is on). A failed load is not kept.
 */
export function kmsCipher(
  config: AwsClientConfig,
  capture: (client: KMSClient) => KMSClient,
  deadlines?: Deadlines,
): KmsCipher {
  type Loaded = { sdk: typeof import('@aws-sdk/client-kms'); client: KMSClient };
  let loading: Promise<Loaded> | undefined;
  const load = () =>
    (loading ??= import('@aws-sdk/client-kms').then(
      (sdk) => ({
        sdk,
        client: capture(
          new sdk.KMSClient({
            region: config.AWS_REGION,
            maxAttempts: config.AWS_MAX_ATTEMPTS,
            requestHandler: awsRequestHandler(config, deadlines),
          }),
        ),
      }),
      (error: unknown) => {
        loading = undefined;
        throw error;
      },
    ));
  return {
    async encrypt(keyId, plaintext) {
      const { sdk, client } = await load();
      return (await client.send(new sdk.EncryptCommand({ KeyId: keyId, Plaintext: plaintext }))).CiphertextBlob!;
    },
    async decrypt(ciphertext) {
      const { sdk, client } = await load();
      return (await client.send(new sdk.DecryptCommand({ CiphertextBlob: ciphertext }))).Plaintext!;
    },
  };
}
