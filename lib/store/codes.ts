import { randomInt, randomUUID } from 'node:crypto';

const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/**
 * A new 6-character participant or platform code. Ambiguous characters (0/O, 1/I) are left out because
 * people read these codes aloud to support. Callers claim the code with a conditional put and retry on
 * the (rare) collision.
 */
export function newParticipantCode(): string {
  let code = '';
  for (let i = 0; i < 6; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return code;
}

export function newId(): string {
  return randomUUID();
}

/**
 * A numeric id (transfers carry a number, as in the reference API) without a hot counter item: the time in
 * milliseconds followed by three random digits. Callers write it with `attribute_not_exists` and draw again
 * on the rare collision. Stays below 2^53 until the year 2255.
 */
export function newNumericId(nowMs: number): number {
  return nowMs * 1000 + randomInt(1000);
}
