import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { AppContext } from '../context.js';

/**
 * API secrets must be recoverable (the HMAC needs them) but never stored in plaintext. On AWS they are
 * encrypted with the stack's KMS key; locally with an AES-256-GCM key kept in DATA_DIR. Stored form:
 * `kms:<base64>` or `aes:<iv>.<tag>.<ciphertext>` (base64 parts).
 */
export async function encryptSecret(ctx: Pick<AppContext, 'config' | 'kms'>, plaintext: string): Promise<string> {
  const { SECRETS_KMS_KEY_ID, SECRETS_LOCAL_KEY } = ctx.config;
  if (SECRETS_KMS_KEY_ID && ctx.kms) {
    const ciphertext = await ctx.kms.encrypt(SECRETS_KMS_KEY_ID, Buffer.from(plaintext, 'utf8'));
    return `kms:${Buffer.from(ciphertext).toString('base64')}`;
  }
  const key = Buffer.from(SECRETS_LOCAL_KEY!, 'base64');
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `aes:${iv.toString('base64')}.${cipher.getAuthTag().toString('base64')}.${ciphertext.toString('base64')}`;
}

export async function decryptSecret(ctx: Pick<AppContext, 'config' | 'kms'>, stored: string): Promise<string> {
  const { SECRETS_LOCAL_KEY } = ctx.config;
  if (stored.startsWith('kms:') && ctx.kms) {
    return Buffer.from(await ctx.kms.decrypt(Buffer.from(stored.slice(4), 'base64'))).toString('utf8');
  }
  if (stored.startsWith('aes:') && SECRETS_LOCAL_KEY) {
    const [iv, tag, ciphertext] = stored
      .slice(4)
      .split('.')
      .map((part) => Buffer.from(part, 'base64'));
    const decipher = createDecipheriv('aes-256-gcm', Buffer.from(SECRETS_LOCAL_KEY, 'base64'), iv!);
    decipher.setAuthTag(tag!);
    return Buffer.concat([decipher.update(ciphertext!), decipher.final()]).toString('utf8');
  }
  throw new Error('stored secret is in a form this deployment cannot decrypt');
}
