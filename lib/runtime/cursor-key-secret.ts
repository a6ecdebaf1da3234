import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { awsRequestHandler, type AwsClientConfig } from './aws-clients.js';
import type { Deadlines } from './deadline.js';

/**
 * Reads the list cursor key from Secrets Manager, kept `maxAgeSeconds` by Powertools' cache. Only
 * `cursor-key-source.ts` imports this module, with `import()`: the Secrets Manager client stays out of what a
 * function loads at its start. The client has the same timeouts and attempts as every other (`aws-clients.ts`).
 */
export function secretReader(
  config: AwsClientConfig,
  secretArn: string,
  maxAgeSeconds: number,
  capture: (client: SecretsManagerClient) => SecretsManagerClient,
  deadlines?: Deadlines,
): () => Promise<string> {
  const provider = new SecretsProvider({
    awsSdkV3Client: capture(
      new SecretsManagerClient({
        region: config.AWS_REGION,
        maxAttempts: config.AWS_MAX_ATTEMPTS,
        requestHandler: awsRequestHandler(config, deadlines),
      }),
    ),
  });
  return async () => {
    let value: unknown;
    try {
      value = await provider.get(secretArn, { maxAge: maxAgeSeconds });
    } catch (error) {
      // Powertools wraps the SDK's error; the SDK's own (a TimeoutError, throttling) is what the error mapper
      // answers with 503 and Retry-After, so that is what goes on.
      throw (error as { cause?: unknown }).cause ?? error;
    }
    if (typeof value !== 'string' || value.length < 32)
      throw new Error(`the list cursor key ${secretArn} is not a text of at least 32 characters`);
    return value;
  };
}
