import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../lib/config.js';
import { openCursor, sealCursor } from '../../lib/crypto/list-cursor.js';
import { createContext } from '../../lib/edge.js';
import { cursorKeyProvider } from '../../lib/runtime/cursor-key.js';

const clientConfig = {
  AWS_REGION: 'us-east-1',
  AWS_CONNECT_TIMEOUT_MS: 1000,
  AWS_REQUEST_TIMEOUT_MS: 2000,
  AWS_MAX_ATTEMPTS: 3,
  AWS_MAX_SOCKETS: 50,
};
const SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:ListCursorKey-AbCdEf';

/**
 * Stands in for Secrets Manager at the client's first middleware step (no request leaves the process): answers
 * GetSecretValue with `secret()` for the stack's secret ARN, or throws what `fail()` gives, and counts the calls.
 */
function fakeSecretsManager(
  client: SecretsManagerClient,
  calls: string[],
  secret: () => string,
  fail?: () => Error | undefined,
): SecretsManagerClient {
  client.middlewareStack.add(
    (_next, context) => async (args) => {
      calls.push(`${context.commandName} ${(args.input as { SecretId: string }).SecretId}`);
      const error = fail?.();
      if (error) throw error;
      return { output: { SecretString: secret(), $metadata: {} }, response: {} };
    },
    { step: 'initialize', name: 'fakeSecretsManager' },
  );
  return client;
}

describe('the list cursor key', () => {
  it('deployed: read from its secret on the first list only, kept by the cache, with one client made then', async () => {
    const calls: string[] = [];
    let made = 0;
    const key = 'k'.repeat(64);
    const cursorKey = cursorKeyProvider({ ...clientConfig, LIST_CURSOR_SECRET_ARN: SECRET_ARN }, (client) => {
      made++;
      return fakeSecretsManager(client, calls, () => key);
    });
    // Nothing is loaded or asked until a list needs the key.
    expect(made).toBe(0);
    const ctx = { cursorKey };
    const cursor = await sealCursor(ctx, '{"n":2}', 'binding');
    expect(await openCursor(ctx, cursor, 'binding')).toBe('{"n":2}');
    expect(await openCursor(ctx, cursor, 'another binding')).toBeUndefined();
    expect(await cursorKey()).toEqual(Buffer.from(key, 'utf8'));
    expect(calls).toEqual([`GetSecretValueCommand ${SECRET_ARN}`]);
    expect(made).toBe(1);
    // The same key as a directly configured one: a cursor is the key's, wherever it was read from.
    const direct = { cursorKey: cursorKeyProvider({ ...clientConfig, LIST_CURSOR_KEY: key }, (client) => client) };
    expect(await openCursor(direct, cursor, 'binding')).toBe('{"n":2}');
  });

  it("passes on the SDK's own error (a timeout answers 503), and reads again on the next list", async () => {
    const calls: string[] = [];
    let failure: Error | undefined = Object.assign(new Error('socket timed out'), { name: 'TimeoutError' });
    const cursorKey = cursorKeyProvider({ ...clientConfig, LIST_CURSOR_SECRET_ARN: SECRET_ARN }, (client) =>
      fakeSecretsManager(
        client,
        calls,
        () => 'k'.repeat(64),
        () => failure,
      ),
    );
    await expect(cursorKey()).rejects.toMatchObject({ name: 'TimeoutError' });
    failure = undefined;
    expect((await cursorKey()).length).toBe(64);
    expect(calls).toHaveLength(2);
  });

  it('refuses a secret too short to be the key', async () => {
    const cursorKey = cursorKeyProvider({ ...clientConfig, LIST_CURSOR_SECRET_ARN: SECRET_ARN }, (client) =>
      fakeSecretsManager(client, [], () => 'short'),
    );
    await expect(cursorKey()).rejects.toThrow(/at least 32 characters/);
  });

  it('locally: derived from the local secrets key, its own key per local key; no Secrets Manager client', async () => {
    const local = (secretsKey: string) =>
      createContext(
        parseConfig({
          TABLE_NAME: 'main',
          TTL_TABLE_NAME: 'windows',
          LOG_LEVEL: 'silent',
          SECRETS_LOCAL_KEY: secretsKey,
        }),
      );
    const one = local(Buffer.alloc(32, 1).toString('base64'));
    const other = local(Buffer.alloc(32, 2).toString('base64'));
    const cursor = await sealCursor(one, 'payload', 'binding');
    expect(await openCursor(one, cursor, 'binding')).toBe('payload');
    expect(await openCursor(other, cursor, 'binding')).toBeUndefined();
    // Not the secrets key itself: the two uses never share a key.
    expect((await one.cursorKey()).equals(Buffer.alloc(32, 1))).toBe(false);
  });

  it('without any key, fails the list that needs one, naming what to set', async () => {
    const cursorKey = cursorKeyProvider(clientConfig, (client) => client);
    await expect(cursorKey()).rejects.toThrow(/LIST_CURSOR_SECRET_ARN/);
  });
});
