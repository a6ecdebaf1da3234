import type { KMSClient } from '@aws-sdk/client-kms';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../lib/config.js';
import { createContext, loadContext } from '../../lib/edge.js';
import { decryptSecret, encryptSecret } from '../../lib/crypto/secret-cipher.js';
import { kmsCipher } from '../../lib/runtime/kms.js';
import { NO_SETTLEMENT_WORKFLOW } from '../../lib/runtime/settlement-workflow.js';

const base = { TABLE_NAME: 'main', TTL_TABLE_NAME: 'windows', LOG_LEVEL: 'silent' };

/**
 * Stands in for KMS at the client's first middleware step (no request leaves the process): "encrypts" by
 * reversing the bytes behind a marker, and counts the calls by command.
 */
function fakeKms(client: KMSClient, calls: string[]): KMSClient {
  client.middlewareStack.add(
    (_next, context) => async (args) => {
      calls.push(context.commandName!);
      const input = args.input as { Plaintext?: Uint8Array; CiphertextBlob?: Uint8Array; KeyId?: string };
      const output =
        context.commandName === 'EncryptCommand'
          ? { CiphertextBlob: Buffer.concat([Buffer.from(`${input.KeyId}|`), Buffer.from(input.Plaintext!).reverse()]) }
          : {
              Plaintext: Buffer.from(
                Buffer.from(input.CiphertextBlob!).subarray(Buffer.from(input.CiphertextBlob!).indexOf('|') + 1),
              ).reverse(),
            };
      return { output: { ...output, $metadata: {} }, response: {} };
    },
    { step: 'initialize', name: 'fakeKms' },
  );
  return client;
}

describe('clients made on first use', () => {
  it('KMS: the secrets go through the key named in the configuration, with one client made on the first call', async () => {
    const calls: string[] = [];
    let made = 0;
    const kms = kmsCipher(
      {
        AWS_REGION: 'us-east-1',
        AWS_CONNECT_TIMEOUT_MS: 1000,
        AWS_REQUEST_TIMEOUT_MS: 2000,
        AWS_MAX_ATTEMPTS: 3,
        AWS_MAX_SOCKETS: 50,
      },
      (client) => {
        made++;
        return fakeKms(client, calls);
      },
    );
    const ctx = { config: parseConfig({ ...base, SECRETS_KMS_KEY_ID: 'alias/secrets' }), kms };
    expect(made).toBe(0);

    const stored = await encryptSecret(ctx, 'whsec_abc');
    expect(stored.startsWith('kms:')).toBe(true);
    expect(Buffer.from(stored.slice(4), 'base64').toString().startsWith('alias/secrets|')).toBe(true);
    expect(await decryptSecret(ctx, stored)).toBe('whsec_abc');
    expect(await decryptSecret(ctx, await encryptSecret(ctx, 'second'))).toBe('second');
    expect(calls).toEqual(['EncryptCommand', 'DecryptCommand', 'EncryptCommand', 'DecryptCommand']);
    expect(made).toBe(1);
  });

  it('a context has a KMS cipher only where the configuration names a key', () => {
    expect(createContext(parseConfig({ ...base, SECRETS_KMS_KEY_ID: 'alias/secrets' })).kms).toBeDefined();
    expect(createContext(parseConfig({ ...base, SECRETS_LOCAL_KEY: 'a2V5' })).kms).toBeUndefined();
  });

  it('Step Functions: loadContext makes the workflow where STATE_MACHINE_ARN names it; createContext refuses to guess', async () => {
    const arn = 'arn:aws:states:us-east-1:123456789012:stateMachine:settlement';
    const local = { ...base, SECRETS_LOCAL_KEY: 'a2V5' };
    const deployed = await loadContext(parseConfig({ ...local, STATE_MACHINE_ARN: arn }));
    expect(deployed.workflow.constructor.name).toBe('StepFunctionsWorkflow');
    expect(deployed.workflow).toMatchObject({ stateMachineArn: arn });
    expect((await loadContext(parseConfig(local))).workflow).toBe(NO_SETTLEMENT_WORKFLOW);
    expect(() => createContext(parseConfig({ ...local, STATE_MACHINE_ARN: arn }))).toThrow(/loadContext/);
  });
});
