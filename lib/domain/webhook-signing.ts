import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks v1 signing: the secret is `whsec_` + base64 of 32 random bytes; a
 * delivery is signed with HMAC-SHA256 over `<webhook-id>.<webhook-timestamp>.<body>` keyed with the decoded
 * secret, sent as `v1,<base64>`; during a rotation one such signature per live secret, space-separated.
 */
const SECRET_PREFIX = 'whsec_';

export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

function keyOf(secret: string): Buffer {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  // A secret that decodes short would sign with a weak key (Standard Webhooks asks for 24 bytes at least).
  if (key.length < 24) throw new Error('webhook secret decodes to fewer than 24 bytes');
  return key;
}

export function signatureHeader(
  secrets: readonly string[],
  webhookId: string,
  timestampSeconds: number,
  body: string,
): string {
  if (secrets.length === 0) throw new Error('no webhook secret to sign with');
  const content = `${webhookId}.${timestampSeconds}.${body}`;
  return secrets
    .map((secret) => `v1,${createHmac('sha256', keyOf(secret)).update(content).digest('base64')}`)
    .join(' ');
}
