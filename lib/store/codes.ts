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
