import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AppContext } from '../context.js';

/**
 * List cursors are tamper-evident: `base64url(payload).base64url(HMAC-SHA256)`, the MAC over what the cursor
 * is bound to (list, platform, partition, filters: the caller's `binding` text) and the payload. A cursor
 * only positions a read within the signed caller's own list, so it needs no secrecy, only this.
 */

/** The context's cursor key (`lib/runtime/cursor-key.ts`: the stack's secret, read at run time, or a local key). */
type CursorContext = Pick<AppContext, 'cursorKey'>;

async function mac(ctx: CursorContext, body: string, binding: string): Promise<Buffer> {
  return createHmac('sha256', await ctx.cursorKey())
    .update(binding)
    .update('\n')
    .update(body)
    .digest();
}

/** The cursor for `payload` (text), bound to `binding`. */
export async function sealCursor(ctx: CursorContext, payload: string, binding: string): Promise<string> {
  const body = Buffer.from(payload).toString('base64url');
  return `${body}.${(await mac(ctx, body, binding)).toString('base64url')}`;
}

/** The payload of a cursor sealed for `binding`, or undefined for anything else (garbage, altered, another binding's). */
export async function openCursor(ctx: CursorContext, cursor: string, binding: string): Promise<string | undefined> {
  const match = /^([A-Za-z0-9_-]{1,2000})\.([A-Za-z0-9_-]{43})$/.exec(cursor);
  if (!match) return undefined;
  const [, body, signature] = match as unknown as [string, string, string];
  const expected = await mac(ctx, body, binding);
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
