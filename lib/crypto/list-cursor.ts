import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { AppContext } from '../context.js';

/**
 * List cursors are tamper-evident: `base64url(payload).base64url(HMAC-SHA256)`, the MAC over what the cursor
 * is bound to (list, platform, partition, filters: the caller's `binding` text) and the payload. A cursor
 * only positions a read within the signed caller's own list, so it needs no secrecy, only this.
 */

/**
 * The HMAC key of cursors: `LIST_CURSOR_KEY` (the stack's secret) or, locally, one derived from the local
 * secrets key (HKDF with its own label, so the two uses never share a key). Derived once per configuration.
 */
function signingKey(ctx: Pick<AppContext, 'config' | 'caches'>): Buffer {
  let key = ctx.caches.cursorKeys.get(ctx.config);
  if (!key) {
    const { LIST_CURSOR_KEY, SECRETS_LOCAL_KEY } = ctx.config;
    if (LIST_CURSOR_KEY) key = Buffer.from(LIST_CURSOR_KEY, 'utf8');
    else if (SECRETS_LOCAL_KEY) {
      key = Buffer.from(
        hkdfSync('sha256', Buffer.from(SECRETS_LOCAL_KEY, 'base64'), Buffer.alloc(0), 'list-cursor-v1', 32),
      );
    } else throw new Error('invalid configuration: set LIST_CURSOR_KEY');
    ctx.caches.cursorKeys.set(ctx.config, key);
  }
  return key;
}

function mac(ctx: Pick<AppContext, 'config' | 'caches'>, body: string, binding: string): Buffer {
  return createHmac('sha256', signingKey(ctx)).update(binding).update('\n').update(body).digest();
}

/** The cursor for `payload` (text), bound to `binding`. */
export function sealCursor(ctx: Pick<AppContext, 'config' | 'caches'>, payload: string, binding: string): string {
  const body = Buffer.from(payload).toString('base64url');
  return `${body}.${mac(ctx, body, binding).toString('base64url')}`;
}

/** The payload of a cursor sealed for `binding`, or undefined for anything else (garbage, altered, another binding's). */
export function openCursor(
  ctx: Pick<AppContext, 'config' | 'caches'>,
  cursor: string,
  binding: string,
): string | undefined {
  const match = /^([A-Za-z0-9_-]{1,2000})\.([A-Za-z0-9_-]{43})$/.exec(cursor);
  if (!match) return undefined;
  const [, body, signature] = match as unknown as [string, string, string];
  const expected = mac(ctx, body, binding);
  const given = Buffer.from(signature, 'base64url');
  // Re-encoding must give back the same text: base64url has spare bits a forger could flip unnoticed.
  if (
    given.length !== expected.length ||
    given.toString('base64url') !== signature ||
    !timingSafeEqual(given, expected)
  )
    return undefined;
  return Buffer.from(body, 'base64url').toString('utf8');
}
